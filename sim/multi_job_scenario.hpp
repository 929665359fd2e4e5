#pragma once
// A scenario with `jobs:` (scenarios/README.md, "Several jobs on one machine"): training jobs,
// each a single-job scenario of its own (the file's top-level keys with the job's keys over
// them), and I/O jobs that only read the parallel file system, placed on disjoint nodes of one
// machine by a policy (packed, spread, random with the seed) or by explicit node lists, started
// at their own times. run_mix() simulates them together in one SimGrid simulation, or one
// training job alone on the same nodes (the reference for its slowdown).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "calibration/cost_model.hpp"
#include "calibration/database.hpp"
#include "sim/llm_runner.hpp"
#include "sim/multi_job.hpp"
#include "sim/scenario.hpp"

namespace scalecast::common {
class ConfigNode;
}

namespace scalecast::sim {

enum class MixPlacement { kPacked, kSpread, kRandom };
const char* to_string(MixPlacement p);

struct MixJob {
  enum class Kind { kTraining, kIo };
  std::string name;
  Kind kind = Kind::kTraining;
  // Training: the job's own scenario (nodes = {node count}, gpus_per_node as resolved).
  Scenario scenario;
  int nodes = 1;
  std::vector<int> node_list;   // platform nodes, in rank order (placed by load_multi_job)
  bool explicit_nodes = false;  // node_list given in the file
  double start_s = 0.0;
  // I/O: sim/multi_job.hpp IoJobSpec.
  double read_rate_Bps = 0.0;
  double request_bytes = 16.0 * 1048576.0;
  double duration_s = 0.0;
  KeyLocation at;        // the job's entry in `jobs`
  KeyLocation start_at;  // its `start` (empty when not given)
};

struct MultiJobSpec {
  MixPlacement placement = MixPlacement::kPacked;
  std::uint64_t seed = 1;
  int machine_nodes = 0;  // nodes of the machine the jobs share (cluster.nodes or the file's)
  std::vector<MixJob> jobs;
  KeyLocation at;  // the `jobs` key
  // Indices into `jobs` of the training jobs (the ones with an alone run and a slowdown).
  std::vector<int> training() const;
};

// Loads the `jobs` form of a scenario from its (overridden) YAML root; called by
// load_scenario() when the root has `jobs`. The returned Scenario is the first training job's
// with the file's name, source and resolved YAML, and `multi` set. Throws common::ConfigError.
Scenario load_multi_job(const common::ConfigNode& root, const std::string& source);

// One cost model (and calibration database, for measured all-reduces) per job of spec.jobs,
// in order (null for I/O jobs).
struct MixPricing {
  std::vector<const calibration::CostModel*> cost;
  std::vector<const calibration::Database*> db;
};

struct MixResult {
  std::vector<int> job_index;  // spec.jobs index of each data-parallel training result
  std::vector<JobResult> training;
  std::vector<int> llm_index;  // spec.jobs index of each LLM (`parallel:`) training result
  std::vector<LlmPointResult> llm;
  std::vector<int> io_index;
  std::vector<IoJobResult> io;
};

// Simulates every job of `s.multi` together (`alone` < 0), or training job `alone` (an index
// into s.multi->jobs) by itself on the same nodes of the same machine. One SimGrid engine per
// process: call once per process.
MixResult run_mix(const Scenario& s, int alone, const MixPricing& pricing);

}  // namespace scalecast::sim
