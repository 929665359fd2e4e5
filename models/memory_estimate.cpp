#include "models/memory_estimate.hpp"

#include <stdexcept>

namespace scalecast::models {

MemoryEstimate estimate_memory(const Model& model, const TrainingStep& step,
                               const MemoryOptions& options) {
  if (options.optimizer_shards < 1 || options.gradient_shards < 1 || options.weight_shards < 1)
    throw std::invalid_argument("memory estimate: shard counts must be at least 1");
  const double params = static_cast<double>(step.totals().params);
  const common::Precision p = step.options().precision;
  const bool mixed = p == common::Precision::kFp16Mixed || p == common::Precision::kBf16Mixed;
  MemoryEstimate m;
  // Mixed precision keeps a 2-byte working copy for the kernels and the fp32 master weights the
  // optimizer updates (Apex O2 / Megatron); fp32 and tf32 store the weights once in fp32.
  m.weights_bytes = (mixed ? 2.0 : 4.0) * params / options.weight_shards;
  m.master_weights_bytes = mixed ? 4.0 * params / options.optimizer_shards : 0.0;
  m.gradients_bytes = static_cast<double>(common::dtype_bytes(step.gradient_dtype())) * params /
                      options.gradient_shards;
  const double states = step.optimizer() == OptimizerKind::kAdam ? 2.0 : 1.0;
  m.optimizer_bytes = states * 4.0 * params / options.optimizer_shards;
  // Activations: every forward op's output stays alive until its backward op has used it (the
  // op itself or its consumer saves it), except ReLU, which frameworks run in place over its
  // input (the saved output is the input's buffer). Dropout's output includes its keep mask.
  for (const Op& op : step.ops()) {
    if (op.pass != Pass::kForward && op.pass != Pass::kLoss) continue;
    if (op.layer >= 0 && static_cast<std::size_t>(op.layer) < model.layers.size() &&
        model.layers[static_cast<std::size_t>(op.layer)].kind == LayerKind::kRelu)
      continue;
    m.activations_bytes += op.bytes_written;
  }
  m.input_bytes = options.input_batch_bytes;
  m.workspace_bytes = options.workspace_bytes;
  return m;
}

}  // namespace scalecast::models
