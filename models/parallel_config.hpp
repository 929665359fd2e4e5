#pragma once
// How an LLM training job is parallelised (Megatron-LM / TorchTitan vocabulary) and checked
// against its model and GPU count. Parsed from a scenario's `parallel:` map.
//
// INTERFACE CONTRACT (coordinator, 3 Dec): struct fields are fixed; helpers may ADD fields and
// functions, not rename or remove these.

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "models/transformer.hpp"

namespace scalecast::common {
class ConfigNode;
}

namespace scalecast::models {

enum class PipelineSchedule { kGPipe, k1F1B, kInterleaved1F1B };
// kSelective: Megatron's selective recomputation (the attention core, Korthikanti et al. 2022).
// kSelectiveOp: TorchTitan's op-level selective AC (parallelize_llama.py `_save_list`): a block's
// matmul outputs are saved except every second one in forward order (count 2, 4, 6, ...), which is
// recomputed with every op not in the save list (norms, activations, RoPE, residual adds);
// attention outputs are saved.
enum class Recompute { kNone, kSelective, kFull, kSelectiveOp };
// ZeRO stage of the data-parallel (sharded) optimizer: 0 = plain DP, 1 = optimizer state
// (Megatron's distributed optimizer), 2 = + gradients, 3 = + weights (FSDP / FSDP2 full shard).
enum class LlmPrecision {
  kBf16,
  kFp16,
  kFp8
};  // FP8: GEMMs in FP8 (Transformer Engine), rest bf16

// Rank order from innermost to outermost (Megatron default: tp, cp, dp, pp).
enum class ParallelDim { kTp, kCp, kDp, kPp };

struct ParallelConfig {
  int tp = 1, pp = 1, cp = 1, dp = 1;
  int virtual_stages = 1;         // chunks per pipeline rank (interleaved schedule)
  std::int64_t micro_batch = 1;   // sequences per micro-batch per DP replica
  std::int64_t global_batch = 1;  // sequences per iteration over all replicas
  std::int64_t seq_len = 0;       // 0 = the model's default
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  bool sequence_parallel = false;  // TP all-reduce -> reduce-scatter + all-gather; norms sharded
  Recompute recompute = Recompute::kNone;
  int zero_stage = 0;  // 0..3
  LlmPrecision precision = LlmPrecision::kBf16;
  // Overlap switches (what the frameworks do when enabled).
  bool overlap_tp_comm = false;      // TP comm overlapped with GEMMs (TE userbuffers)
  bool overlap_dp_comm = true;       // DP grad reduce(-scatter) overlapped with backward
  bool overlap_param_gather = true;  // ZeRO-3/FSDP all-gather prefetch / dist-opt param gather
  std::vector<ParallelDim> order = {ParallelDim::kTp, ParallelDim::kCp, ParallelDim::kDp,
                                    ParallelDim::kPp};
  // Added. Uneven pipeline split (Megatron --decoder-first/last-pipeline-num-layers; Llama 3.1
  // 405B puts one layer fewer on the first and last of 16 stages for the embedding and the loss):
  // blocks on the first / last pipeline rank, 0 = the even split. Needs virtual_stages 1.
  std::int64_t first_stage_layers = 0, last_stage_layers = 0;
  // Added. Fused attention (FlashAttention): the causal kernel does half the S^2 work and keeps
  // no S^2 tensor. false: Megatron-2021 unfused attention (full S^2 GEMMs, S^2 softmax and
  // dropout activations, Korthikanti's 5as/h term).
  bool flash_attention = true;
  // Added. With recompute full: every k-th block is checkpointed (blocks k-1, 2k-1, ...), the
  // others keep their activations (TorchTitan's selective layer AC, `selective_ac_option: k`).
  int recompute_every = 1;
  // Added. Bytes per element of the data-parallel gradient reduction: 4 (fp32: Megatron's bf16
  // recipe reduces fp32 main gradients, FSDP2's reduce_dtype in TorchTitan), 2 (Megatron-LM 2021
  // with --fp16 reduced the fp16 gradients; NeMo's grad_sync_dtype bf16).
  int grad_reduce_bytes = 4;
  // Derived.
  std::int64_t micro_batches() const {  // per iteration per pipeline
    return dp > 0 && micro_batch > 0 ? global_batch / (dp * micro_batch) : 0;
  }
  // tp x pp x cp x dp in 64 bits (their int product wrapped: 8 x 1025 x 1,047,553 = 2^33 + 8
  // passed as 8 GPUs), saturated at INT64_MAX (four degrees of 2^20 are 2^80).
  std::int64_t gpus() const { return degree_product({tp, pp, cp, dp}); }
  // Added. The product of parallel degrees (each >= 1), saturated at INT64_MAX.
  static std::int64_t degree_product(std::initializer_list<int> degrees) {
    std::int64_t out = 1;
    for (const int d : degrees) {
      if (d < 1) return 0;
      if (out > std::numeric_limits<std::int64_t>::max() / d)
        return std::numeric_limits<std::int64_t>::max();
      out *= d;
    }
    return out;
  }
  // ZeRO 3 under a pipeline schedule: FSDP as TorchTitan runs it, parameters gathered once per
  // iteration and gradients reduced once (models/README.md "DP comms").
  bool pipelined_fsdp() const { return zero_stage >= 3 && pp > 1; }
};

// Parses `parallel:` (keys tp, pp, cp, dp, virtual_stages, micro_batch, global_batch, seq_len,
// schedule, sequence_parallel, recompute, recompute_every, zero_stage, precision, overlap: {tp, dp,
// param_gather}, grad_reduce_dtype, order) and checks it against the model and the job's GPU count:
// TP divides heads and kv_heads (and ffn, hidden), PP x virtual_stages divides layers, CP divides
// seq_len (2 x CP for causal load balancing), tp*pp*cp*dp == gpus, global_batch divisible by
// dp*micro_batch, interleaved needs virtual_stages > 1 and micro-batches a multiple of pp. Errors
// are ConfigErrors at the key.
ParallelConfig parse_parallel(const common::ConfigNode& node, const TransformerSpec& model,
                              int gpus);
// Added: the same checks on a config built in code (std::invalid_argument naming the field).
// gpus <= 0: not checked against a GPU count (parse_parallel then needs `dp` or takes 1).
void check_parallel(const ParallelConfig& config, const TransformerSpec& model, int gpus);

std::string_view to_string(PipelineSchedule s);  // "gpipe", "1f1b", "interleaved"
std::string_view to_string(Recompute r);         // "none", "selective", "full", "selective_op"
std::string_view to_string(LlmPrecision p);      // "bf16", "fp16", "fp8"
std::string_view to_string(ParallelDim d);       // "tp", "cp", "dp", "pp"

// Added. Training FLOPs per token of the whole model at the config's sequence length: model FLOPs
// (3 x forward, the MFU numerator of Korthikanti et al. / PaLM) or hardware FLOPs (HFU: + the
// recomputed forward: full = every block's forward, selective = attention's seq^2 terms).
// `causal_half` as in transformer_flops().
double training_flops_per_token(const TransformerSpec& model, const ParallelConfig& config,
                                bool hardware, bool causal_half = false);
// Added. Weights (elements, whole model, before the TP split) of the matmuls one block recomputes
// under Recompute::kSelectiveOp: the 2nd, 4th and 6th of TorchTitan's forward order (wq, wk, wv,
// wo, w1, w3, w2 for SwiGLU; q, k, v, o, fc1, fc2 otherwise): wk, wo and w3 (or fc2), i.e.
// d x kv_dim + d x d + d x ffn for both kinds.
std::int64_t selective_op_recomputed_weights(const TransformerSpec& model);

// Per-GPU memory of one pipeline stage (closed forms, Korthikanti et al. 2022 for activations,
// Rajbhandari et al. 2020 for ZeRO): bytes of weights, gradients, optimizer state (+fp32 master),
// activations of the micro-batches in flight under the schedule and recompute policy, workspace.
struct StageMemory {
  int stage = 0;
  double weights_bytes = 0, gradients_bytes = 0, optimizer_bytes = 0, activations_bytes = 0,
         workspace_bytes = 0;
  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + workspace_bytes;
  }
};
std::vector<StageMemory> estimate_stage_memory(const TransformerSpec& model,
                                               const ParallelConfig& config);
// Added. Throws std::invalid_argument when a stage's total exceeds `device_bytes`: "pipeline
// stage 0 needs 93.4 GB per GPU, 13.4 GB more than the device's 80.0 GB (weights ...)".
void check_stage_memory(const std::vector<StageMemory>& stages, double device_bytes);
// Added. Workspace per GPU counted in every stage (CUDA context, cuBLAS/NCCL buffers, allocator
// slack) [assumption], as models/memory_estimate.hpp's fixed term.
inline constexpr double kLlmWorkspaceBytes = 512.0 * 1024 * 1024;

}  // namespace scalecast::models

namespace scalecast::models {

// Layers of each model chunk. Chunk c (0 .. pp*virtual_stages-1) runs on pipeline rank
// c % pp (Megatron's interleaved assignment; virtual_stages 1: chunk c = rank c) and holds
// transformer blocks [first_layer, first_layer + layers); the first chunk also holds the input
// embedding, the last the final norm, output projection and loss.
struct ChunkLayers {
  int chunk = 0;
  int pp_rank = 0;
  std::int64_t first_layer = 0;
  std::int64_t layers = 0;
  bool has_embedding = false;
  bool has_output = false;
};
std::vector<ChunkLayers> chunk_layers(const TransformerSpec& model, const ParallelConfig& config);

}  // namespace scalecast::models
