#pragma once
// A data-parallel training job replayed on a simulated platform: one rank per GPU of the chosen
// nodes, each rank an actor that runs the step program's compute timeline (analytic: a GPU's
// compute stream is private), its input copy (a real host-to-device flow), and the bucketed
// gradient all-reduce as real SimGrid communications on the real routes, so link sharing with
// other buckets, other jobs and I/O is solved by SimGrid. Horovod-style fusion: job rank 0 is
// the coordinator that decides, each cycle, which ready tensors form the next bucket.
//
// Symmetry: at `wave` fidelity all nodes of a homogeneous job do the same thing at the same
// time, and intra-node links are private to a node, so the intra-node phases and input copies
// are simulated on node 0 only and the other nodes wait for node 0 (a gate); the inter-node
// phases, which share the fabric, stay real flows between every node: one "rail" actor per
// node and NIC group sends the group's share of each bucket to the next node's, from the
// group's first GPU, so only node 0 has one actor per GPU. The input pipeline (storage read,
// decode, copy) runs on node 0 only as well, except parallel file system reads, which every
// node issues (one reader actor per node and CPU socket) because they share the file system.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "calibration/collective_model.hpp"
#include "sim/collective_config.hpp"
#include "sim/input_pipeline.hpp"
#include "sim/parameter_server.hpp"
#include "sim/recorder.hpp"
#include "sim/step_program.hpp"

namespace simgrid::s4u {
class Host;
}

namespace scalecast::sim {

class SimulatedPlatform;

struct JobSpec {
  std::string name = "job";
  std::vector<int> nodes;  // platform node indices, in rank order
  int gpus_per_node = 1;   // local GPUs 0..gpus_per_node-1 of each node
  StepProgram program;
  // Heterogeneous jobs: when not empty, one entry per node of `nodes`, indexing `programs` (the
  // step as priced on that node's GPU type); `program` then stands for programs[node_program[0]]
  // in what every rank shares (batch, input bytes, the gradients and their buckets). All
  // programs must list the same gradients (the same model). Ranks then differ, so the symmetry
  // shortcut is off, and synchronous training waits for the slowest GPU type at every bucket.
  std::vector<StepProgram> programs;
  std::vector<int> node_program;
  AllReduceConfig allreduce;
  // NCCL's tuning model for this job's communicator (collective_config.hpp); null: the flow
  // patterns alone, no protocol factors or NCCL latencies (the engine-level tests).
  std::shared_ptr<const calibration::CollectiveModel> collectives;
  // The hierarchical algorithm's stages are NCCL calls on their own communicators (Horovod): the
  // node's GPUs (reduce-scatter, all-gather) and one GPU per node (the inter-node all-reduce).
  std::shared_ptr<const calibration::CollectiveModel> collectives_intra, collectives_inter;
  Fidelity fidelity = Fidelity::kWave;  // kAuto is resolved by size
  int warmup = 0;
  int iterations = 1;
  // Called on job rank 0 as each iteration (warm-up included) ends: (done, warmup + iterations).
  // For progress reports only; it must not touch the simulation.
  std::function<void(int, int)> on_iteration;
  bool prefetch = true;  // input copy of the next batch overlaps this step
  // Storage read, decode and copy stages ahead of compute (input_pipeline.hpp); when not
  // `staged()` the input is the host-to-device copy above, with `prefetch`.
  InputPipelineSpec input;
  // Job-local node indices whose ranks are kept in full for ops.csv and trace.json (rank 0's
  // node is always kept: the metrics use it).
  std::vector<int> trace_nodes = {0};
  bool symmetric = true;  // allow the node-0 shortcut at wave fidelity
  // Per local GPU, the NIC (rail) it sends through; GPUs sharing a NIC form a group whose
  // inter-node traffic the symmetric wave mode carries as one flow per node (empty: no groups).
  std::vector<int> nic_groups;
  // Run-to-run variability: each rank's compute timeline of an iteration is stretched by a
  // lognormal factor of mean 1 and this coefficient of variation, and a `straggler_fraction` of
  // the ranks (chosen by the seed) is slower by `straggler_slowdown`. Either turns the symmetry
  // shortcut off (ranks differ). Same seed, same numbers.
  double compute_noise_cv = 0.0;
  double straggler_fraction = 0.0;
  double straggler_slowdown = 1.0;
  std::uint64_t seed = 1;
  // Gradient exchange through host memory (sim/README.md "Parameter servers" and "MPI on the
  // CPU"). With ps.tasks > 0 parameter servers replace the all-reduce: task k keeps its
  // variables on platform node ps_nodes[k] (its first CPU socket, or its first GPU) and
  // updates them at ps_memory_Bps[k]. With allreduce.library mpi_cpu, MPI reduces on the CPU
  // sockets at the lesser of cpu_memory_Bps (per socket, shared by the socket's ranks) and
  // cpu_core_Bps (one core: each rank's reduction and copies are single-threaded). TCP (allreduce.
  // transport) caps each stream at tcp.stream_rate_Bps(). The symmetry shortcut is off.
  ParameterServerConfig ps;
  std::vector<int> ps_nodes;
  std::vector<double> ps_memory_Bps;
  double cpu_memory_Bps = 0.0;
  double cpu_core_Bps = 0.0;  // bytes/s of memory traffic one core streams; 0: no core limit
  TcpParams tcp;
};

struct JobResult {
  std::string name;
  int nodes = 0, gpus_per_node = 0, gpus = 0, batch_per_gpu = 0;
  Algorithm algorithm = Algorithm::kRing;
  Fidelity fidelity = Fidelity::kWave;
  std::vector<IterationRecord> iterations;  // measured iterations
  double iteration_time_s = 0.0;            // mean over measured iterations
  double throughput_samples_per_s = 0.0;
  Breakdown breakdown;  // mean per iteration
  double comm_total_s = 0.0;
  double gpu_utilization = 0.0;  // compute-stream busy fraction
  double buckets_per_iteration = 0.0;
  // With a collective model: buckets per iteration by "algorithm/protocol", and the tier of the
  // collective terms ("measured" when any bucket used measured NCCL times, else "datasheet").
  std::map<std::string, double> collective_choices;
  std::string collective_tier;
  // Mean per measured iteration: how much later rank 0's backward pass ended because its
  // collectives held SMs while it ran (sim/README.md "Collectives hold SMs"); 0 without.
  double compute_lost_to_collectives_s = 0.0;
  // What priced the step: per cost-model tier ("exact", "interpolated", "fitted", "datasheet"),
  // the ops of one (micro-batch) step program and the sum of their durations, over the job's
  // distinct programs (one per GPU type). How much of a prediction rests on measured kernels.
  struct TierUse {
    int ops = 0;
    double seconds = 0.0;
  };
  std::map<std::string, TierUse> op_tiers;
  // Compute ops priced faster than the GPU's peak (StepProgram::above_peak_ops), over the
  // job's programs, and the largest rate over the peak.
  int above_peak_ops = 0;
  double above_peak_max_ratio = 0.0;
  std::map<std::string, double> bytes_per_iteration;
  std::vector<Interval> intervals;
  InputPipelineSpec input;  // as replayed
};

class Job {
 public:
  // Creates the rank actors on the platform's GPU hosts; run the SimGrid engine afterwards.
  Job(const SimulatedPlatform& platform, JobSpec spec);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // Valid after the engine has run.
  JobResult result() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace scalecast::sim
