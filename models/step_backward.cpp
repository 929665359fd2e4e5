// Backward half of StepAssembler: gradient accumulation, per-layer backward ops, optimizer.
#include <algorithm>
#include <utility>

#include "models/step_assembler.hpp"

namespace scalecast::models {
namespace {

constexpr double kReluBwdFlops = 1, kGeluBwdFlops = 10, kTanhBwdFlops = 3, kDropoutBwdFlops = 1;
constexpr double kNormBwdFlops = 12, kSoftmaxBwdFlops = 3, kLossBwdFlops = 2;
// Optimizer FLOPs and fp32 state per parameter. SGD: d = g + λw, m = μm + d, w −= ηm.
// Adam(W): two moments, bias correction, sqrt, divide, decoupled weight decay.
constexpr double kSgdFlops = 6, kAdamFlops = 16;
constexpr double kSgdStateBytes = 4, kAdamStateBytes = 8;  // momentum; first + second moment

}  // namespace

void StepAssembler::backward(int i) {
  const auto u = static_cast<std::size_t>(i);
  if (!requires_grad_[u]) return;
  const Layer& l = model_.layers[u];
  const TensorShape& in = shapes_.out[static_cast<std::size_t>(l.inputs[0])];
  const TensorShape& out = shapes_.out[u];
  const double ab = recipe_.act_bytes, gb = recipe_.grad_bytes;
  const double in_el = static_cast<double>(n_ * in.elements());
  const double out_el = static_cast<double>(n_ * out.elements());

  // 1. When is d(loss)/d(output) complete? After the loss, or after every consumer's dgrad
  // (summed by an accumulation kernel when there are several, as autograd does).
  const auto& cons = consumers_[u];
  if (l.kind == LayerKind::kSoftmaxCrossEntropy || cons.empty()) {
    grad_ready_[u] = {loss_op_[u]};
  } else if (cons.size() == 1) {
    grad_ready_[u] = dx_ready_[static_cast<std::size_t>(cons[0])];
  } else {
    std::vector<OpId> preds;
    for (int c : cons) {
      for (OpId p : dx_ready_[static_cast<std::size_t>(c)]) preds.push_back(p);
    }
    const double k = static_cast<double>(cons.size());
    Op acc = make(i, ".grad_accum", OpClass::kElementwise, Pass::kBackwardData);
    acc.elements = n_ * out.elements();
    acc.flops = (k - 1.0) * out_el;
    acc.bytes_read = k * out_el * ab;
    acc.bytes_written = out_el * ab;
    grad_ready_[u] = {emit(std::move(acc), preds)};
  }
  const std::vector<OpId>& gr = grad_ready_[u];
  bool needs_dx = false;
  for (int k : l.inputs) needs_dx = needs_dx || requires_grad_[static_cast<std::size_t>(k)];

  auto simple = [&](OpClass c, double flops_per_el, double extra_read) {
    Op op = make(i, ".bwd", c, Pass::kBackwardData);
    op.elements = n_ * in.elements();
    op.flops = flops_per_el * in_el;
    op.bytes_read = (out_el + extra_read) * ab;
    op.bytes_written = in_el * ab;
    const OpId id = emit(std::move(op), gr);
    dx_ready_[u] = {id};
    return id;
  };
  auto bias_grad = [&](std::int64_t rows_x_out, std::int64_t channels) {
    Op b = make(i, ".bgrad", OpClass::kReduction, Pass::kBackwardWeight);
    b.elements = rows_x_out;
    b.flops = static_cast<double>(rows_x_out);
    b.bytes_read = static_cast<double>(rows_x_out) * ab;
    b.bytes_written = static_cast<double>(channels) * gb;
    add_gradient(i, "bias", channels, emit(std::move(b), gr));
  };

  switch (l.kind) {
    case LayerKind::kConv: {
      const OpId fwd = ready_[u][0] - (l.bias ? 1 : 0);
      const Op& f = step_.ops_[fwd];
      const std::int64_t weights = l.out * (in.c / l.groups) * l.kernel_h * l.kernel_w;
      const double flops = f.flops;  // dgrad and wgrad each = forward MACs (docs/sources.md,
                                     // Conventions: backward pass)
      const ConvShape shape = f.conv;
      if (needs_dx) {  // the first layer's input needs no gradient
        Op d = make(i, ".dgrad", OpClass::kConv, Pass::kBackwardData);
        d.conv = shape;
        d.flops = flops;
        d.bytes_read = (out_el + static_cast<double>(weights)) * ab;
        d.bytes_written = in_el * ab;
        dx_ready_[u] = {emit(std::move(d), gr)};
      }
      Op w = make(i, ".wgrad", OpClass::kConv, Pass::kBackwardWeight);
      w.conv = shape;
      w.flops = flops;
      w.bytes_read = (out_el + in_el) * ab;
      w.bytes_written = static_cast<double>(weights) * gb;
      add_gradient(i, "weight", weights, emit(std::move(w), gr));
      if (l.bias) bias_grad(n_ * out.elements(), l.out);
      break;
    }
    case LayerKind::kLinear: {
      const std::int64_t rows = n_ * in.h * in.w;
      const double flops =
          2.0 * static_cast<double>(l.out) * static_cast<double>(rows) * static_cast<double>(in.c);
      const double weights = static_cast<double>(l.out * in.c);
      if (needs_dx) {  // dX = dY·W: m = in, n = rows, k = out
        Op d = make(i, ".dgrad", OpClass::kGemm, Pass::kBackwardData);
        d.gemm = {in.c, rows, l.out, false, false, 1};
        d.flops = flops;
        d.bytes_read = (out_el + weights) * ab;
        d.bytes_written = in_el * ab;
        dx_ready_[u] = {emit(std::move(d), gr)};
      }
      Op w = make(i, ".wgrad", OpClass::kGemm, Pass::kBackwardWeight);  // dW = dYᵀ·X
      w.gemm = {in.c, l.out, rows, false, true, 1};
      w.flops = flops;
      w.bytes_read = (out_el + in_el) * ab;
      w.bytes_written = weights * gb;
      const OpId wid = emit(std::move(w), gr);
      if (l.tied_to >= 0) {
        tied_wgrads_[static_cast<std::size_t>(l.tied_to)].push_back(wid);
      } else {
        add_gradient(i, "weight", l.out * in.c, wid);
      }
      if (l.bias) bias_grad(rows * l.out, l.out);
      break;
    }
    case LayerKind::kBatchNorm:
    case LayerKind::kLayerNorm: {  // one kernel: dx, dγ, dβ
      const OpId id = simple(OpClass::kNormalization, kNormBwdFlops, in_el);
      step_.ops_[id].bytes_written += 2.0 * static_cast<double>(in.c) * gb;
      add_gradient(i, "weight", in.c, id);
      add_gradient(i, "bias", in.c, id);
      break;
    }
    case LayerKind::kRelu:
      simple(OpClass::kElementwise, kReluBwdFlops, out_el);
      break;
    case LayerKind::kGelu:
      simple(OpClass::kElementwise, kGeluBwdFlops, in_el);
      break;
    case LayerKind::kTanh:
      simple(OpClass::kElementwise, kTanhBwdFlops, out_el);
      break;
    case LayerKind::kDropout:
      simple(OpClass::kElementwise, kDropoutBwdFlops, out_el / ab);  // + the 1-byte mask
      break;
    case LayerKind::kMaxPool:  // scatter to the arg-max (indices read as well)
      simple(OpClass::kPooling, out_el / in_el, out_el * (8.0 / ab));
      step_.ops_.back().conv = step_.ops_[ready_[u][0]].conv;
      break;
    case LayerKind::kAvgPool:
    case LayerKind::kAdaptiveAvgPool:
    case LayerKind::kGlobalAvgPool:
      simple(OpClass::kPooling, 1.0, 0.0);
      step_.ops_.back().conv = step_.ops_[ready_[u][0]].conv;
      break;
    case LayerKind::kSelectToken:  // zero-filled full-size gradient with one token written
      simple(OpClass::kElementwise, 0.0, 0.0);
      break;
    case LayerKind::kSoftmaxCrossEntropy: {
      Op g = make(i, ".grad", OpClass::kSoftmax, Pass::kBackwardData);
      g.dtype = common::DType::kFp32;
      g.elements = n_ * in.elements();
      g.flops = kLossBwdFlops * in_el;
      g.bytes_read = in_el * ab;
      g.bytes_written = in_el * ab;
      dx_ready_[u] = {emit(std::move(g), gr)};
      break;
    }
    case LayerKind::kEmbedding: {  // scatter-add into a dense table gradient (PyTorch default)
      std::vector<OpId> preds = gr;
      for (OpId t : tied_wgrads_[u]) preds.push_back(t);
      Op w = make(i, ".wgrad", OpClass::kEmbedding, Pass::kBackwardWeight);
      w.elements = n_ * out.elements();
      w.flops = out_el;
      w.bytes_read = out_el * ab + static_cast<double>(n_ * out.h) * 8.0;
      w.bytes_written = static_cast<double>(l.rows * l.out) * gb;
      add_gradient(i, "weight", l.rows * l.out, emit(std::move(w), preds));
      break;
    }
    case LayerKind::kAttention:
      backward_attention(i);
      break;
    default:  // add, concat, flatten: the output gradient is (a view of) each input's gradient
      dx_ready_[u] = gr;
      break;
  }
}

void StepAssembler::backward_attention(int i) {
  const auto u = static_cast<std::size_t>(i);
  const Layer& l = model_.layers[u];
  const TensorShape& out = shapes_.out[u];
  const std::int64_t s = out.h, d = out.c, dh = d / l.heads, b = n_ * l.heads;
  const double ab = recipe_.act_bytes;
  const double scores = static_cast<double>(b * s * s);
  const double seq_el = static_cast<double>(n_ * s * d);
  const double gemm_flops = 2.0 * static_cast<double>(s * s * dh) * static_cast<double>(b);
  const std::vector<OpId>& gr = grad_ready_[u];
  if (options_.fused_attention) {
    // One kernel: dV = Pᵀ·dO, dP = dO·Vᵀ, the softmax and dropout gradients in registers, dQ =
    // dS·K, dK = dSᵀ·Q (four products); Q, K, V, dO and the stored probabilities in, dQ, dK and
    // dV out.
    Op op = make(i, ".fused.bwd", OpClass::kAttention, Pass::kBackwardData);
    op.gemm = {s, s, 4 * dh, false, true, b};
    op.flops = 4.0 * gemm_flops;
    op.bytes_read = (4.0 * seq_el + scores) * ab;
    op.bytes_written = 3.0 * seq_el * ab;
    dx_ready_[u] = {emit(std::move(op), gr)};
    return;
  }
  // Each S×S product has two input gradients, each as many MACs as the forward (docs/sources.md,
  // Conventions: backward pass).
  auto gemm = [&](const char* suffix, GemmShape g, double reads, double writes,
                  const std::vector<OpId>& preds) {
    Op op = make(i, suffix, OpClass::kGemm, Pass::kBackwardData);
    op.gemm = g;
    op.flops = gemm_flops;
    op.bytes_read = reads * ab;
    op.bytes_written = writes * ab;
    return emit(std::move(op), preds);
  };
  const OpId dp = gemm(".av.dgrad_p", {s, s, dh, true, false, b}, 2.0 * seq_el, scores, gr);
  const OpId dv = gemm(".av.dgrad_v", {dh, s, s, false, true, b}, scores + seq_el, seq_el, gr);
  OpId last = dp;
  if (l.dropout_p > 0.0) {
    Op dr = make(i, ".dropout.bwd", OpClass::kElementwise, Pass::kBackwardData);
    dr.elements = b * s * s;
    dr.flops = kDropoutBwdFlops * scores;
    dr.bytes_read = scores * (ab + 1.0);
    dr.bytes_written = scores * ab;
    last = emit(std::move(dr), {last});
  }
  Op sm = make(i, ".softmax.bwd", OpClass::kSoftmax, Pass::kBackwardData);
  sm.elements = b * s * s;
  sm.flops = kSoftmaxBwdFlops * scores;
  sm.bytes_read = 2.0 * scores * ab;
  sm.bytes_written = scores * ab;
  last = emit(std::move(sm), {last});
  const OpId dq = gemm(".qk.dgrad_q", {dh, s, s, false, false, b}, scores + seq_el, seq_el, {last});
  const OpId dk = gemm(".qk.dgrad_k", {dh, s, s, false, true, b}, scores + seq_el, seq_el, {last});
  dx_ready_[u] = {dv, dq, dk};
}

void StepAssembler::optimizer() {
  const bool adam = step_.optimizer_ == OptimizerKind::kAdam;
  const bool mixed = recipe_.act != common::DType::kFp32;
  // Per parameter: read fp32 master weight, gradient and state; write weight and state; mixed
  // precision also writes the half-precision working copy. Unscaling of fp16 gradients (loss
  // scaling) is fused into the update, as in Apex's fused optimizers.
  const double state = adam ? kAdamStateBytes : kSgdStateBytes;
  const double read_pp = 4.0 + recipe_.grad_bytes + state;
  const double write_pp = 4.0 + state + (mixed ? recipe_.act_bytes : 0.0);
  const double flops_pp = adam ? kAdamFlops : kSgdFlops;
  auto make_update = [&](std::string name, std::int64_t params, int layer) {
    Op op;
    op.name = std::move(name);
    op.op_class = OpClass::kOptimizer;
    op.pass = Pass::kOptimizer;
    op.layer = layer;
    op.dtype = common::DType::kFp32;
    op.elements = params;
    op.flops = flops_pp * static_cast<double>(params);
    op.bytes_read = read_pp * static_cast<double>(params);
    op.bytes_written = write_pp * static_cast<double>(params);
    return op;
  };
  auto& grads = step_.gradients_;
  if (options_.optimizer_ops == OptimizerOps::kPerTensor) {
    for (auto& g : grads)
      g.update_op = emit(make_update("optimizer." + g.name, g.params, g.layer), {g.ready_after});
    return;
  }
  std::vector<OpId> preds;
  preds.reserve(grads.size());
  std::int64_t total = 0;
  for (const auto& g : grads) {
    if (preds.empty() || preds.back() != g.ready_after) preds.push_back(g.ready_after);
    total += g.params;
  }
  const OpId id = emit(make_update("optimizer.step", total, -1), preds);
  for (auto& g : grads) g.update_op = id;
}

}  // namespace scalecast::models
