#pragma once
// The work of one micro-batch on one GPU of an LLM job, chunk by chunk: the ops (TP-sharded GEMM
// shapes, attention, norms, elementwise, in the precision's dtypes) and the communication that
// separates them (TP all-reduce or reduce-scatter/all-gather, CP K/V exchange), the bytes sent to
// the next pipeline stage, and the per-iteration DP gradient and ZeRO parameter traffic. sim/
// prices the ops with a CostModel and replays the schedule; this file knows no time.
//
// INTERFACE CONTRACT (coordinator, 3 Dec): struct fields are fixed; helpers may ADD fields and
// functions, not rename or remove these.

#include <string>
#include <vector>

#include "models/op.hpp"
#include "models/parallel_config.hpp"
#include "models/transformer.hpp"

namespace scalecast::models {

// kDpCp (added): data x context parallel ranks, which hold the same weights and so reduce
// gradients (and shard ZeRO state) together, as Megatron-LM does when cp > 1.
enum class CommGroup { kTp, kCp, kDp, kPp, kDpCp };
enum class CommKind { kAllReduce, kReduceScatter, kAllGather, kSendRecv };

struct LlmComm {
  std::string name;                  // "layer3.attn.tp_allreduce"
  CommGroup group = CommGroup::kTp;  // the communicator it runs on
  CommKind kind = CommKind::kAllReduce;
  double bytes = 0.0;         // buffer bytes per GPU (the collective's input size)
  int steps = 1;              // kSendRecv ring steps (CP: cp - 1 K/V exchanges)
  bool overlappable = false;  // may run under the next segment's compute
  // Added. The whole tensor: = bytes for all-reduce and reduce-scatter (input = whole), the
  // gathered output (bytes x group size) for all-gather; = bytes for kSendRecv (per step).
  double full_bytes = 0.0;
  // Added. dp_comms only: runs once per micro-batch (ZeRO-3 / FSDP parameter all-gather before
  // each forward and backward, and its gradient reduce-scatter) instead of once per iteration.
  bool per_micro_batch = false;
  // Added. dp_comms only, ZeRO 3 with pp > 1: FSDP under a pipeline schedule as TorchTitan runs
  // it. The parameters are gathered once per iteration, before the chunk's first forward, and
  // kept through every micro-batch (TorchTitan's default reshard_after_forward = not pp_enabled,
  // "to avoid per-microbatch all-gathers" [TorchTitan-parallelize]); the gradients are
  // reduce-scattered once, after the chunk's last backward (torch.distributed.pipelining turns
  // FSDP's gradient sync and reshard-after-backward off for every backward but the last and runs
  // the post-backward after it [PyTorch-pipelining-stage]).
  bool pipelined_fsdp = false;
};

// Ops run in order on the compute stream, then `comms` (in order) before the next segment.
struct LlmSegment {
  std::vector<Op> ops;
  std::vector<LlmComm> comms;
};

struct ChunkStep {
  ChunkLayers layers;
  std::vector<LlmSegment> forward;   // one micro-batch
  std::vector<LlmSegment> backward;  // one micro-batch (recomputation included per policy)
  double send_forward_bytes = 0.0;   // activation to the next chunk (0 for the last)
  double send_backward_bytes = 0.0;  // its gradient back to the previous chunk (0 for the first)
  std::int64_t parameters = 0;       // parameters of this chunk on this GPU (after TP split)
  // Gradient reduction over DP (all-reduce for ZeRO 0; reduce-scatter for 1/2/3, as Megatron's
  // distributed optimizer and FSDP do, the same volume as the all-reduce: Rajbhandari et al. 2020
  // sec. 7.2), once per iteration, or per micro-batch for ZeRO 2 and 3 at pp 1
  // (per_micro_batch); parameter all-gather (ZeRO 1/2 after the optimizer; ZeRO 3 before every
  // forward and backward, per_micro_batch, or with pp > 1 once before the first forward,
  // pipelined_fsdp).
  std::vector<LlmComm> dp_comms;
  std::vector<Op> optimizer_ops;  // the optimizer step on this GPU's shard
};

// One entry per chunk (pp * virtual_stages).
std::vector<ChunkStep> build_llm_step(const TransformerSpec& model, const ParallelConfig& config);

// Added. Bytes per element of the ZeRO parameter all-gather (the bf16 working copy). The DP
// gradient reduction's are ParallelConfig::grad_reduce_bytes (fp32 by default: Megatron's bf16
// recipe accumulates and reduces main gradients in fp32, as FSDP2's reduce_dtype in TorchTitan).
inline constexpr double kParamGatherBytes = 2.0;

// Added. Parameters of one chunk on one GPU after the TP split (column-parallel weights and biases
// / tp; row-parallel biases, norms and the position table replicated; vocabulary rows ceil(V/tp);
// a tied output projection on a last chunk that is not the first holds its own copy, as Megatron).
std::int64_t chunk_parameters(const TransformerSpec& model, const ParallelConfig& config,
                              const ChunkLayers& chunk);

}  // namespace scalecast::models
