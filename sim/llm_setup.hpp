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

// What simulating one LLM point costs, estimated before it runs from what the pipeline job
// (sim/pipeline_job.hpp) does per iteration: every simulated stage actor (pp of them, x dp with
// variability) runs, per micro-batch and model chunk, each segment of the chunk's forward and
// backward as a compute delay and each TP/CP collective and p2p message as flows, and records
// the last iteration's intervals for the trace; each stage's DP collectives are rings of one flow
// per member and channel, whose max-min sharing costs grow with the square and more of their
// flows. Constants measured on this repository's CI build (sim/README.md, "LLM job cost").
struct LlmWork {
  double segments = 0.0;    // compute segments run per iteration (all simulated actors)
  double messages = 0.0;    // TP/CP collective calls and p2p messages per iteration
  double dp_calls = 0.0;    // DP collectives per iteration (all stages)
  double ring_flows = 0.0;  // flows of one DP collective (members x channels)
  int replicas = 1;         // DP replicas simulated (dp with variability)
  // Events per iteration: segments and messages (the unit of the cap below).
  double events() const { return segments + messages; }
  double iteration_s() const;    // wall seconds per simulated iteration
  double records_bytes() const;  // memory of one iteration's records (segments, messages)
};
// Measured: 2 us and about 340 B a segment (a 65,536-block model, one stage), a p2p message
// about 20 us (GPT-3 175B at pp 32 x 3 virtual stages, 4,096 micro-batches: 26 s and 2.5 GB an
// iteration); a DP ring of 8,000 flows about 60 s, of 16,000 about 350 s.
inline constexpr double kLlmSegmentSeconds = 2e-6, kLlmMessageSeconds = 20e-6,
                        kLlmEventBytes = 500.0, kLlmRingSeconds8k = 60.0, kLlmRingExponent = 2.5;
// Above these a point is refused at load: 40 million events an iteration need about 15-20 GB
// of records and 2-10 minutes per iteration; a DP collective of more than 32,768 flows about
// half an hour each (100,000 nodes of Llama 3 8B at tp 8: hours per iteration).
inline constexpr double kMaxLlmEventsPerIteration = 40e6;
inline constexpr double kMaxLlmRingFlows = 32768;
// Above this many estimated wall seconds a point warns before it starts.
inline constexpr double kLlmWarnSeconds = 60.0;

// `replicas`: 1, or dp when the scenario's variability breaks the DP symmetry.
LlmWork estimate_llm_work(const LlmSetup& llm, int gpus_per_node, int replicas);
// The warning for a point whose whole run (warmup + iterations) is estimated above
// kLlmWarnSeconds; "" otherwise.
std::string llm_cost_warning(const LlmWork& work, int total_iterations);

}  // namespace scalecast::sim
