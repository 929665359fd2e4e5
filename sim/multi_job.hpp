#pragma once
// Several jobs on one simulated machine, in one SimGrid simulation, so they share links,
// switches and the parallel file system the way SimGrid's max-min sharing solves it. Training
// jobs are sim::Job (data parallel) or sim::PipelineJob (LLM) as a single job runs them, each
// started at its own simulated time; an I/O job (a noisy neighbour) only reads the parallel file
// system from its nodes at a set rate.

#include <memory>
#include <string>
#include <vector>

#include "sim/job.hpp"
#include "sim/pipeline_job.hpp"

namespace scalecast::sim {

class SimulatedPlatform;

// A training job and when it starts (simulated seconds from 0).
struct ScheduledJob {
  JobSpec spec;
  double start_s = 0.0;
};

// An LLM training job (3-D parallel, sim/pipeline_job.hpp) and when it starts.
struct ScheduledPipelineJob {
  PipelineJobSpec spec;
  double start_s = 0.0;
};

// A job that only reads the PFS: from each of its nodes' first CPU host, requests of
// `request_bytes` (a disk read on a PFS server and, at the same time, a flow from that server to
// the node over the platform's route, as the input pipeline reads), paced so the job asks for
// `read_rate_Bps` in all (split evenly over its nodes); when the file system gives less, it
// reads back to back. It stops after `duration_s` (0: when the training jobs are done). Either
// way it never reads more than it asked: with a duration, the whole requests that fit rate x
// duration from the start; without one, each request once rate x the time elapsed covers it.
// The most requests one I/O job reads: SimGrid 3.32's cost per completed transfer grows with
// the transfers before it (36k requests took 5 s, 72k 23 s, 1.2e9 never ended).
inline constexpr long kMaxIoRequests = 50'000;

struct IoJobSpec {
  std::string name = "io";
  std::vector<int> nodes;
  double read_rate_Bps = 1e9;
  double request_bytes = 16.0 * 1048576.0;
  double start_s = 0.0;
  double duration_s = 0.0;
  // Where the job is written (jobs[i]), for a job without a duration that reaches
  // kMaxIoRequests before the training jobs end: an error there, not a read cut short.
  std::string file;
  int line = 0;
  int column = 0;
  std::string key;
  long max_requests = kMaxIoRequests;  // all nodes together
};

struct IoJobResult {
  std::string name;
  int nodes = 0;
  double start_s = 0.0;
  // End of its window: start + duration (or its last read, if later); without a duration, the
  // end of the simulation (the last training job's end).
  double end_s = 0.0;
  double bytes_read = 0.0;  // all nodes, completed reads
  double requested_rate_Bps = 0.0;
  double achieved_rate_Bps = 0.0;  // bytes_read / (end_s - start_s)
};

class JobMix {
 public:
  // Creates the jobs that start at 0 and a launcher actor per later job, which creates it at its
  // start time. An I/O job needs the platform's PFS servers. Throws std::invalid_argument on a
  // bad spec (a later job's when run() reaches its start; the simulation is then stopped).
  JobMix(const SimulatedPlatform& platform, std::vector<ScheduledJob> jobs,
         std::vector<IoJobSpec> io = {}, std::vector<ScheduledPipelineJob> pipelines = {});
  ~JobMix();
  JobMix(const JobMix&) = delete;
  JobMix& operator=(const JobMix&) = delete;

  // Runs the process's SimGrid engine to the end; rethrows a later job's construction error.
  void run();

  // Valid after run(), in the order given. Iteration records are in simulated time (a job starting
  // at t has its first iteration at t); iteration_time_s and throughput do not depend on the start.
  std::vector<JobResult> results() const;
  std::vector<IoJobResult> io_results() const;
  std::vector<PipelineResult> pipeline_results() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace scalecast::sim
