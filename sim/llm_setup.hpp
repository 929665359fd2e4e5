#pragma once
// The LLM side of a scenario: a transformer model (zoo name or a model file with
// `transformer:`) trained with the `parallel:` configuration. A scenario with a `parallel:` map
// runs the pipeline job (sim/pipeline_job.hpp) instead of the data-parallel one; it has one size,
// tp x pp x cp x dp GPUs.

#include <string>
#include <vector>

#include "models/parallel_config.hpp"
#include "models/transformer.hpp"

namespace scalecast::common {
class ConfigNode;
}
namespace scalecast::platforms {
struct Platform;
}

namespace scalecast::sim {

struct LlmSetup {
  models::TransformerSpec model;
  models::ParallelConfig parallel;
  // Per pipeline stage, the GPU catalog name its ranks must run on (`stage_gpus:`), empty: the
  // placement decides (every stage on the job's nodes in Megatron order).
  std::vector<std::string> stage_gpus;
  std::int64_t seq_len() const { return parallel.seq_len > 0 ? parallel.seq_len : model.seq_len; }
};

// The scenario keys that belong to one kind of job only. With `parallel:` the keys that select
// the batch, precision or sequence length elsewhere (they are in `parallel`), and the single-job
// keys the pipeline job does not simulate (fixed host costs, the input pipeline,
// flow fidelity, the data-parallel exchange settings, framework presets, time to train, the
// parameter-server strategy, trace node selection): each is an error at its key saying why,
// never silently ignored. Without `parallel:`, `stage_gpus` is an error. `llm` says whether
// the scenario has `parallel:`.
void check_job_kind_keys(const common::ConfigNode& root, bool llm);

// Reads `parallel:` (and `stage_gpus:`) of a scenario whose model is `model_ref`, for a job of
// `gpus` GPUs on `machine`; checks the configuration (models::parse_parallel) and that every
// stage fits in the memory of every GPU type it may run on (unless `memory_check` is false).
// ConfigErrors at the keys.
LlmSetup load_llm_setup(const common::ConfigNode& root, const std::string& model_ref, int gpus,
                        const platforms::Platform& machine, bool memory_check = true);
// With `stage_gpus:`, that the job's stages can be placed on `machine` (the machine the point
// runs on) as the LLM runner places them: pp outermost in parallel.order, whole nodes per stage
// (`gpus_per_node`, 0: the fewest of any partition's node type) and enough nodes of each listed
// GPU type. ConfigErrors at parallel.order or stage_gpus; nothing without stage_gpus.
void check_stage_placement(const common::ConfigNode& root, const LlmSetup& llm,
                           const platforms::Platform& machine, int gpus_per_node);
// The same for a scenario's node counts: exactly one (else an error at `nodes_key`), with
// `gpus_per_node` (0: the fewest GPUs of any partition's node type) GPUs each.
LlmSetup load_llm_for_nodes(const common::ConfigNode& root, const std::string& model_ref,
                            const std::vector<int>& nodes, int gpus_per_node,
                            const platforms::Platform& machine, bool memory_check,
                            const common::ConfigNode& nodes_key);

}  // namespace scalecast::sim
