#pragma once
// The graph of one data-parallel training step on one GPU: forward ops, loss, backward-data and
// backward-weight ops, and the optimizer update, as a DAG (Boost.Graph), plus the gradient
// tensors in the order they become ready (reverse layer order), which is what bucketed
// all-reduce (Horovod tensor fusion, DDP buckets) sees.
//
// Contract used by calibration/ and sim/ (models/ implements it):
//   - ops() is a topological order: every forward op (layer order), the loss op(s), then for
//     each layer in reverse its backward ops (gradient accumulation when its output fed several
//     layers, dgrad, wgrad, bias grad, or the one backward kernel of BN/LN/activations/pooling;
//     the first layer has no dgrad), then the optimizer op(s);
//   - predecessors(i) lists the ops op i waits for (real data dependencies: a layer's dgrad and
//     wgrad both wait for its output gradient; nothing orders independent ops);
//   - gradients() is in ready order, each naming the op after which it is ready (conv/linear:
//     wgrad or bias grad; BN/LN: their backward kernel; embeddings: their scatter, which also
//     waits for the wgrads of linears tied to the table);
//   - buckets(bytes) fuses consecutive ready gradients up to `bytes` per bucket;
//   - the optimizer waits only for gradient producers; in data parallel the engine adds the
//     all-reduce of each bucket in front of it (fused: one op; per tensor:
//     GradientTensor::update_op).

#include <boost/graph/adjacency_list.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/precision.hpp"
#include "models/model.hpp"
#include "models/op.hpp"

namespace scalecast::models {

using OpId = std::size_t;

struct GradientTensor {
  std::string name;  // e.g. "layer4.2.conv3.weight"
  std::int64_t params = 0;
  double bytes = 0.0;    // params × bytes per element of the gradient dtype
  OpId ready_after = 0;  // the backward-weight op that produces it
  int layer = -1;        // the model layer owning the tensor
  OpId update_op = 0;    // the optimizer op that consumes it (the fused op, or its own)
};

struct GradientBucket {
  std::vector<std::size_t> tensors;  // indices into gradients()
  double bytes = 0.0;
  OpId ready_after = 0;  // the last producer among its tensors
};

// How the optimizer update appears in the graph.
enum class OptimizerOps {
  kFused,      // one op "optimizer.step" over all parameters (Apex/PyTorch fused optimizers)
  kPerTensor,  // one op per gradient tensor, "optimizer.<tensor>" (foreach-free PyTorch loop)
};

struct StepOptions {
  std::int64_t batch = 1;  // samples per GPU
  common::Precision precision = common::Precision::kFp32;
  // Gradient dtype crossing the network; default: fp32 for fp32/tf32, fp16 for fp16 mixed,
  // bf16 for bf16 mixed (the framework's gradients are in the compute dtype).
  std::optional<common::DType> gradient_dtype;
  std::int64_t seq_len = 0;                // transformers; 0 = the model default
  std::optional<OptimizerKind> optimizer;  // default: the model's (SGD momentum / Adam)
  OptimizerOps optimizer_ops = OptimizerOps::kFused;
  // Attention as one fused kernel per pass (apex's FMHA, as NVIDIA's MLPerf BERT runs it): the
  // forward computes Q·Kᵀ, softmax, dropout and P·V and writes the probabilities once for the
  // backward, which reads them back for dV, dP, dQ and dK; false = the framework's separate
  // batched GEMMs, softmax and dropout, each through memory (models/README.md "Attention").
  bool fused_attention = false;
};

// One row of the per-layer table (`scalecast describe model`).
struct LayerSummary {
  std::string name;
  LayerKind kind = LayerKind::kInput;
  TensorShape in, out;  // per sample; `in` is the first input's shape
  std::int64_t params = 0;
  double fwd_macs = 0.0;                    // conv/GEMM multiply-accumulates, whole batch
  double fwd_flops = 0.0, bwd_flops = 0.0;  // all ops of the layer, whole batch
};

struct StepTotals {
  double forward_flops = 0.0;   // Pass::kForward and kLoss ops
  double backward_flops = 0.0;  // kBackwardData and kBackwardWeight ops
  double optimizer_flops = 0.0;
  double forward_macs = 0.0;   // conv + GEMM forward multiply-accumulates (torchvision "_ops")
  double backward_macs = 0.0;  // conv + GEMM dgrad/wgrad multiply-accumulates
  std::int64_t params = 0;
  double gradient_bytes = 0.0;
  std::size_t op_count = 0;
};

class TrainingStep {
 public:
  // Vertex i is ops()[i]; an edge u→v means v waits for u.
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

  TrainingStep() = default;

  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<OpId>& predecessors(OpId op) const { return preds_[op]; }
  const std::vector<GradientTensor>& gradients() const { return gradients_; }
  // Fuses consecutive ready gradients while the bucket stays within bucket_bytes (Horovod
  // tensor fusion); a tensor larger than that gets its own bucket; 0 = one bucket per tensor.
  std::vector<GradientBucket> buckets(double bucket_bytes) const;
  const StepTotals& totals() const { return totals_; }
  const std::vector<LayerSummary>& layers() const { return layers_; }
  const Graph& graph() const { return graph_; }
  const StepOptions& options() const { return options_; }
  std::int64_t seq_len() const { return seq_len_; }  // 0 for image models
  common::DType gradient_dtype() const { return gradient_dtype_; }
  OptimizerKind optimizer() const { return optimizer_; }
  // FLOPs on the longest dependency chain (a lower bound on one GPU's compute time × peak).
  double critical_path_flops() const;

 private:
  friend class StepAssembler;
  std::vector<Op> ops_;
  std::vector<std::vector<OpId>> preds_;
  std::vector<GradientTensor> gradients_;
  std::vector<LayerSummary> layers_;
  StepTotals totals_;
  Graph graph_;
  StepOptions options_;
  std::int64_t seq_len_ = 0;
  common::DType gradient_dtype_ = common::DType::kFp32;
  OptimizerKind optimizer_ = OptimizerKind::kSgdMomentum;
};

// Builds one training step of `model`. Throws common::ConfigError for a model whose shapes do
// not work out (e.g. a sequence longer than its position table) and std::invalid_argument for
// bad options (batch < 1, a gradient dtype other than fp32/fp16/bf16).
TrainingStep build_training_step(const Model& model, const StepOptions& options);

}  // namespace scalecast::models
