// estimate_stage_memory() / check_stage_memory(): per-GPU memory of each pipeline stage of an LLM
// job in closed form. Model state: Rajbhandari et al. 2020 (ZeRO) mixed-precision Adam, 2 + 2 + 12
// bytes per parameter, the ZeRO stage dividing them over the data-parallel (x context-parallel)
// group. Activations: Korthikanti et al. 2022, Table 2, times the micro-batches in flight.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/llm_step.hpp"
#include "models/parallel_config.hpp"

namespace scalecast::models {
namespace {

constexpr double kWeightBytes = 2, kGradBytes = 2, kOptimizerBytes = 12;

// Bytes one transformer block keeps for one micro-batch (Korthikanti et al. 2022, Table 2, with
// s the tokens per CP rank). FlashAttention stores no S^2 tensor, which removes the 5as/h term
// as selective recomputation does.
double layer_activation_bytes(const TransformerSpec& m, const ParallelConfig& c, Recompute r) {
  const double s = static_cast<double>((c.seq_len > 0 ? c.seq_len : m.seq_len) / c.cp);
  const double b = static_cast<double>(c.micro_batch), h = static_cast<double>(m.hidden);
  const double a = static_cast<double>(m.heads), t = static_cast<double>(c.tp);
  const double sbh = s * b * h;
  if (r == Recompute::kFull) return c.sequence_parallel ? 2.0 * sbh / t : 2.0 * sbh;
  // TorchTitan's op-level AC saves most matmul outputs: taken as no recomputation (an upper bound).
  if (r == Recompute::kSelectiveOp) r = Recompute::kNone;
  const double attn = (r == Recompute::kNone && !c.flash_attention) ? 5.0 * a * s / h : 0.0;
  return c.sequence_parallel ? sbh / t * (34.0 + attn) : sbh * (10.0 + 24.0 / t + attn / t);
}

// Micro-batches whose activations a pipeline rank holds at its peak, per chunk it runs.
double in_flight(const ParallelConfig& c, int rank) {
  const double m = static_cast<double>(c.micro_batches());
  switch (c.schedule) {
    case PipelineSchedule::kGPipe:
      return m;
    case PipelineSchedule::k1F1B:
      return std::min(m, static_cast<double>(c.pp - rank));
    case PipelineSchedule::kInterleaved1F1B: {
      // Megatron's warm-up: (pp - rank - 1) x 2 + (v - 1) x pp forward chunks, plus the one in
      // steady state; rank 0 holds pp(v + 1) - 1 chunk-micro-batches, L(1 + (p-1)/(pv)) layers'
      // worth (Korthikanti et al. 2022). Returned per chunk.
      const double v = c.virtual_stages;
      const double chunks = std::min(m * v, 2.0 * (c.pp - rank - 1) + (v - 1) * c.pp + 1);
      return chunks / v;
    }
  }
  return m;
}

std::string gb(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }

}  // namespace

std::vector<StageMemory> estimate_stage_memory(const TransformerSpec& model,
                                               const ParallelConfig& config) {
  const double group = static_cast<double>(config.dp) * config.cp;
  const auto chunks = chunk_layers(model, config);
  std::vector<StageMemory> out;
  for (int rank = 0; rank < config.pp; ++rank) {
    StageMemory st;
    st.stage = rank;
    double params = 0, layers = 0;
    bool output = false;
    for (const ChunkLayers& ch : chunks) {
      if (ch.pp_rank != rank) continue;
      params += static_cast<double>(chunk_parameters(model, config, ch));
      layers += static_cast<double>(ch.layers);
      output = output || ch.has_output;
    }
    // ZeRO 3 under a pipeline schedule keeps the gathered parameters and the unsharded gradients
    // from the first forward to the last backward (llm_step.hpp, LlmComm::pipelined_fsdp).
    const bool kept = config.pipelined_fsdp();
    st.weights_bytes = kWeightBytes * params / (config.zero_stage >= 3 && !kept ? group : 1.0);
    st.gradients_bytes = kGradBytes * params / (config.zero_stage >= 2 && !kept ? group : 1.0);
    st.optimizer_bytes = kOptimizerBytes * params / (config.zero_stage >= 1 ? group : 1.0);
    // With recompute_every k, one block in k is checkpointed and the others keep everything.
    const double checkpointed = config.recompute == Recompute::kFull
                                    ? std::floor(layers / std::max(1, config.recompute_every))
                                    : layers;
    st.activations_bytes =
        in_flight(config, rank) *
        (checkpointed * layer_activation_bytes(model, config, config.recompute) +
         (layers - checkpointed) * layer_activation_bytes(model, config, Recompute::kNone));
    // Full recomputation rebuilds one layer's activations at a time during its backward.
    if (config.recompute == Recompute::kFull)
      st.activations_bytes += layer_activation_bytes(model, config, Recompute::kNone);
    if (output) {
      // fp32 logits of the micro-batch at the loss, vocabulary-sharded over TP.
      const double s =
          static_cast<double>((config.seq_len > 0 ? config.seq_len : model.seq_len) / config.cp);
      st.activations_bytes += 4.0 * s * static_cast<double>(config.micro_batch) *
                              static_cast<double>(model.vocab) / config.tp;
    }
    st.workspace_bytes = kLlmWorkspaceBytes;
    out.push_back(st);
  }
  return out;
}

void check_stage_memory(const std::vector<StageMemory>& stages, double device_bytes) {
  const StageMemory* worst = nullptr;
  int over = 0;
  for (const StageMemory& s : stages) {
    if (s.total_bytes() <= device_bytes) continue;
    ++over;
    if (!worst || s.total_bytes() > worst->total_bytes()) worst = &s;
  }
  if (!worst) return;
  throw std::invalid_argument(fmt::format(
      "pipeline stage {} needs {} per GPU, {} more than the device's {} (weights {}, gradients "
      "{}, optimizer state {}, activations {}, workspace {}){}",
      worst->stage, gb(worst->total_bytes()), gb(worst->total_bytes() - device_bytes),
      gb(device_bytes), gb(worst->weights_bytes), gb(worst->gradients_bytes),
      gb(worst->optimizer_bytes), gb(worst->activations_bytes), gb(worst->workspace_bytes),
      over > 1 ? fmt::format("; {} of {} stages do not fit", over, stages.size()) : ""));
}

}  // namespace scalecast::models
