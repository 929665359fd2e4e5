#pragma once
// Device memory one GPU needs to train a step: weights, gradients, optimizer state (by
// optimizer and precision recipe), the activations the forward pass keeps for backward, the
// input batches on the device and a fixed workspace. A first-order estimate of the peak, used to
// reject configurations that cannot run (a model and batch that do not fit the GPU) before
// simulating them; the formula is in models/README.md ("Memory estimate"). The shard divisors
// let ZeRO-style partitioning (stage 1: optimizer state, 2: + gradients, 3: + weights) reuse it.

#include "models/model.hpp"
#include "models/training_step.hpp"

namespace scalecast::models {

// CUDA context, cuDNN/cuBLAS workspaces and caching-allocator slack, one figure for every GPU
// [assumption: a CUDA context takes 0.3-0.5 GB; cuDNN picks algorithms within a workspace
// limit].
inline constexpr double kDefaultWorkspaceBytes = 512.0 * 1048576.0;

struct MemoryOptions {
  double input_batch_bytes = 0.0;  // input batches resident on the GPU (current + prefetched)
  double workspace_bytes = kDefaultWorkspaceBytes;
  // Data-parallel ranks each tensor class is partitioned over (1 = replicated, plain DP).
  int optimizer_shards = 1;
  int gradient_shards = 1;
  int weight_shards = 1;
};

struct MemoryEstimate {
  double weights_bytes = 0.0;         // the parameters in the compute recipe's storage dtype
  double master_weights_bytes = 0.0;  // fp32 copy of the weights under mixed precision
  double gradients_bytes = 0.0;       // one gradient per parameter, in the gradient dtype
  double optimizer_bytes = 0.0;       // fp32 state: SGD momentum 1 buffer, Adam 2
  double activations_bytes = 0.0;     // forward outputs kept for backward, whole batch
  double input_bytes = 0.0;
  double workspace_bytes = 0.0;
  double total_bytes() const {
    return weights_bytes + master_weights_bytes + gradients_bytes + optimizer_bytes +
           activations_bytes + input_bytes + workspace_bytes;
  }
};

// Estimate for `step`, a training step of `model` (the model tells which forward ops run in
// place). Throws std::invalid_argument for a shard count below 1.
MemoryEstimate estimate_memory(const Model& model, const TrainingStep& step,
                               const MemoryOptions& options = {});

}  // namespace scalecast::models
