#pragma once
// A scenario: which machine, which model trained how, at which sizes, simulated how. Loaded from
// YAML (schema in scenarios/README.md) through common::ConfigNode, so unknown keys and bad
// values are ConfigErrors with file:line:col; `--set key.path=value` overrides are applied to
// the YAML tree before validation, so they are checked exactly like the file.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "calibration/fixed_costs.hpp"
#include "common/precision.hpp"
#include "sim/collective_config.hpp"
#include "sim/input_pipeline.hpp"
#include "sim/llm_setup.hpp"
#include "sim/parameter_server.hpp"
#include "sim/simulated_platform.hpp"

namespace scalecast::common {
class ConfigNode;
}

namespace scalecast::sim {

struct MultiJobSpec;  // sim/multi_job_scenario.hpp

enum class Placement { kPacked, kSpread };

// Where a key was given (file:line:col and key path), for errors found after loading.
struct KeyLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string key;
};

// time_to_train (sim/time_to_train.hpp): which convergence table prices epochs to target.
struct TimeToTrainSpec {
  bool enabled = false;
  std::string table;      // resolved table name
  std::string data_file;  // resolved convergence data file
  bool extrapolate = false;
  KeyLocation at;  // the key, for errors found later
};

struct Scenario {
  std::string name;          // from the file name unless given
  std::string source_file;   // as given on the command line
  std::string platform;      // platform name (platforms/<name>.yaml) or a path
  std::string model;         // model zoo name or a model YAML path
  std::int64_t seq_len = 0;  // tokens per sequence for token models; 0: the model's default
  // `attention: fused`: each attention layer one kernel per pass (models::StepOptions).
  bool fused_attention = false;
  common::Precision precision = common::Precision::kFp32;
  int batch_per_gpu = 32;  // samples per GPU per forward/backward pass (one micro-batch)
  // Gradient accumulation: forward/backward passes per iteration (one exchange, one optimizer
  // step each), sim/step_program.hpp accumulate_micro_batches.
  int accumulation = 1;
  std::vector<int> nodes = {1};       // one simulation per entry
  std::vector<KeyLocation> nodes_at;  // where each entry of `nodes` was given
  // cluster.nodes: the machine's size in nodes (grown or shrunk by the platform's topology
  // rule); 0 = `fit`: the platform file's size, grown to a point's node count when it needs more.
  int cluster_nodes = 0;
  std::string cluster_partition;  // cluster.partition: the partition that grows; "" = largest
  KeyLocation cluster_nodes_at, cluster_partition_at;
  int gpus_per_node = 0;  // 0: every GPU of the node
  Placement placement = Placement::kPacked;
  KeyLocation placement_at;                // where `placement` was given (file:1:1 when it was not)
  std::string strategy = "data_parallel";  // or parameter_server (sim/scenario_strategy.hpp)
  ParameterServerConfig parameter_server;  // tasks > 0 with strategy parameter_server
  // framework: sets the bucketing of `allreduce` and `fixed_costs` (sim/framework_preset.hpp)
  // before the scenario's own allreduce.* and fixed_costs.* keys; kNone: engine defaults.
  calibration::Framework framework = calibration::Framework::kNone;
  AllReduceConfig allreduce;
  calibration::FixedCostParams fixed_costs;  // host costs outside the framework efficiency
  Fidelity fidelity = Fidelity::kAuto;
  int flow_limit_gpus = 48;  // `auto` fidelity: flow up to this many GPUs
  int iterations = 2;
  int warmup = 1;
  std::uint64_t seed = 1;
  NetworkMode network = NetworkMode::kCalibrated;
  double input_sample_bytes = 0.0;  // host-to-device bytes per sample
  bool prefetch = true;             // input.prefetch; false forces prefetch_depth 0
  // input.source / stored_sample_size / decode_rate / decode_cores / prefetch_depth;
  // input.decode_cores here is 0 when absent (resolved from the platform per point).
  InputPipelineSpec input;
  std::vector<std::string> calibration;  // calibration database files, in priority order
  double framework_efficiency = 1.0;     // scales compute times: time / efficiency
  int trace_nodes = 2;                   // nodes kept in ops.csv / trace.json (first and last)
  std::vector<int> trace_node_list;      // explicit job-local node indices (overrides)
  double compute_noise_cv = 0.0;         // variability.compute_noise
  double straggler_fraction = 0.0;       // variability.stragglers
  double straggler_slowdown = 1.0;       // variability.straggler_slowdown
  bool memory_check = true;              // reject a model/batch/precision that does not fit
  std::string resolved_yaml;             // the scenario after overrides, for the output folder
  TimeToTrainSpec time_to_train;         // off unless the scenario asks
  // A scenario with `jobs:` (several jobs on one machine, sim/multi_job_scenario.hpp); null for
  // the single-job form, whose fields above are the job.
  std::shared_ptr<const MultiJobSpec> multi;
  // LLM training (`parallel:` with a transformer model): the point runs the pipeline job
  // (sim/llm_runner.hpp); `nodes` then has one entry and batch, precision and sequence length
  // are parallel's.
  std::optional<LlmSetup> llm;
};

// "key.path=value" pairs from --set.
std::vector<std::pair<std::string, std::string>> parse_overrides(
    const std::vector<std::string>& sets);

// Loads and validates; throws common::ConfigError.
Scenario load_scenario(const std::string& path,
                       const std::vector<std::pair<std::string, std::string>>& overrides = {});
Scenario load_scenario_text(const std::string& text, const std::string& name,
                            const std::vector<std::pair<std::string, std::string>>& overrides = {});

// The single-job form from a YAML root (overrides already applied): what load_scenario()
// validates when the root has no `jobs`; the multi-job loader loads each job's scenario with it.
Scenario load_scenario_node(const common::ConfigNode& root, const std::string& source);

// Tokens per sequence the scenario trains with: its seq_len, else the model's default; 0 for a
// model whose input is an image. Loads the model (throws as models::load_model does).
std::int64_t effective_seq_len(const Scenario& s);

// Job-local node indices to trace for an N-node point.
std::vector<int> trace_nodes_for(const Scenario& s, int nodes);

}  // namespace scalecast::sim
