#include "models/step_assembler.hpp"

#include <stdexcept>
#include <utility>

namespace scalecast::models {
namespace {

using common::DType;
using common::Precision;

// FLOPs per element of the memory-bound ops. They are approximate (the cost model prices these
// ops by bytes moved); matrix ops are exact: 2 FLOP per multiply-accumulate (docs/sources.md,
// Conventions). Backward counterparts are in step_backward.cpp.
constexpr double kReluFlops = 1;
constexpr double kGeluFlops = 8;  // tanh approximation
constexpr double kTanhFlops = 4;
constexpr double kDropoutFlops = 2;  // random mask and scale
constexpr double kNormFlops = 8;     // statistics, normalise, scale+shift
constexpr double kSoftmaxFlops = 5;  // scale/mask, max, exp, sum, divide

bool is_matrix(OpClass c) {
  return c == OpClass::kConv || c == OpClass::kGemm || c == OpClass::kAttention;
}

}  // namespace

StepAssembler::StepAssembler(const Model& model, const StepOptions& options)
    : model_(model), options_(options) {
  if (options.batch < 1) throw std::invalid_argument("batch must be at least 1");
  n_ = options.batch;
  switch (options.precision) {
    case Precision::kFp32:
      break;
    case Precision::kTf32:
      recipe_.matrix = DType::kTf32;
      recipe_.tensor_core = true;
      break;
    case Precision::kFp16Mixed:
      recipe_.act = recipe_.matrix = DType::kFp16;
      recipe_.tensor_core = true;
      break;
    case Precision::kBf16Mixed:
      recipe_.act = recipe_.matrix = DType::kBf16;
      recipe_.tensor_core = true;
      break;
  }
  recipe_.act_bytes = common::dtype_bytes(recipe_.act);
  DType grad =
      options.gradient_dtype.value_or(recipe_.act == DType::kFp32 ? DType::kFp32 : recipe_.act);
  if (grad != DType::kFp32 && grad != DType::kFp16 && grad != DType::kBf16) {
    throw std::invalid_argument("gradient dtype must be fp32, fp16 or bf16");
  }
  recipe_.grad_bytes = common::dtype_bytes(grad);
  step_.options_ = options;
  step_.gradient_dtype_ = grad;
  step_.optimizer_ = options.optimizer.value_or(model.optimizer);
}

Op StepAssembler::make(int layer, const char* suffix, OpClass c, Pass p) const {
  Op op;
  const std::string& base = model_.layers[static_cast<std::size_t>(layer)].name;
  op.name.reserve(base.size() + 16);
  op.name = base;
  if (suffix != nullptr) op.name += suffix;
  op.op_class = c;
  op.pass = p;
  op.layer = layer;
  op.dtype = is_matrix(c) ? recipe_.matrix : recipe_.act;
  op.tensor_core = is_matrix(c) && recipe_.tensor_core;
  return op;
}

OpId StepAssembler::emit(Op op, const std::vector<OpId>& preds) {
  const OpId id = step_.ops_.size();
  step_.ops_.push_back(std::move(op));
  step_.preds_.push_back(preds);
  return id;
}

OpId StepAssembler::emit(Op op, std::initializer_list<OpId> preds) {
  const OpId id = step_.ops_.size();
  step_.ops_.push_back(std::move(op));
  step_.preds_.emplace_back(preds);
  return id;
}

void StepAssembler::add_gradient(int layer, const char* suffix, std::int64_t params,
                                 OpId producer) {
  GradientTensor g;
  g.name = model_.layers[static_cast<std::size_t>(layer)].name + "." + suffix;
  g.params = params;
  g.bytes = static_cast<double>(params) * recipe_.grad_bytes;
  g.ready_after = producer;
  g.layer = layer;
  step_.gradients_.push_back(std::move(g));
}

TrainingStep StepAssembler::run() {
  shapes_ = infer_shapes(model_, options_.seq_len);
  step_.seq_len_ = shapes_.seq_len;
  consumers_ = consumers(model_);
  const std::size_t count = model_.layers.size();
  ready_.assign(count, {});
  grad_ready_.assign(count, {});
  dx_ready_.assign(count, {});
  loss_op_.assign(count, 0);
  tied_wgrads_.assign(count, {});
  requires_grad_.assign(count, 0);
  for (std::size_t i = 1; i < count; ++i) {
    bool r = shapes_.params[i] > 0 || model_.layers[i].tied_to >= 0;
    for (int in : model_.layers[i].inputs) r = r || requires_grad_[static_cast<std::size_t>(in)];
    requires_grad_[i] = r;
  }
  step_.ops_.reserve(count * 4);
  step_.preds_.reserve(count * 4);
  for (std::size_t i = 1; i < count; ++i) {
    if (model_.layers[i].kind != LayerKind::kSoftmaxCrossEntropy) forward(static_cast<int>(i));
  }
  losses();
  for (std::size_t i = count - 1; i >= 1; --i) backward(static_cast<int>(i));
  optimizer();
  finish();
  return std::move(step_);
}

void StepAssembler::forward(int i) {
  const auto u = static_cast<std::size_t>(i);
  const Layer& l = model_.layers[u];
  const TensorShape& in = shapes_.out[static_cast<std::size_t>(l.inputs[0])];
  const TensorShape& out = shapes_.out[u];
  const double ab = recipe_.act_bytes;
  const double in_el = static_cast<double>(n_ * in.elements());
  const double out_el = static_cast<double>(n_ * out.elements());
  std::vector<OpId> preds;
  for (int k : l.inputs) {
    for (OpId p : ready_[static_cast<std::size_t>(k)]) preds.push_back(p);
  }
  auto simple = [&](OpClass c, double flops_per_el, double reads) {
    Op op = make(i, nullptr, c, Pass::kForward);
    op.elements = n_ * out.elements();
    op.flops = flops_per_el * out_el;
    op.bytes_read = reads * ab;
    op.bytes_written = out_el * ab;
    op.params = shapes_.params[u];
    ready_[u] = {emit(std::move(op), preds)};
  };
  switch (l.kind) {
    case LayerKind::kConv: {
      Op op = make(i, nullptr, OpClass::kConv, Pass::kForward);
      op.conv = {n_,      in.c,       in.h,       in.w, l.out, l.kernel_h, l.kernel_w, l.pad_h,
                 l.pad_w, l.stride_h, l.stride_w, 1,    1,     l.groups,   out.h,      out.w};
      const double weights =
          static_cast<double>(l.out * (in.c / l.groups) * l.kernel_h * l.kernel_w);
      op.flops = 2.0 * out_el * static_cast<double>(in.c / l.groups * l.kernel_h * l.kernel_w);
      op.bytes_read = (in_el + weights) * ab;
      op.bytes_written = out_el * ab;
      op.params = shapes_.params[u];
      OpId id = emit(std::move(op), preds);
      if (l.bias) {  // PyTorch adds a conv bias in a separate kernel after cuDNN
        Op b = make(i, ".bias", OpClass::kElementwise, Pass::kForward);
        b.elements = n_ * out.elements();
        b.flops = out_el;
        b.bytes_read = out_el * ab;
        b.bytes_written = out_el * ab;
        id = emit(std::move(b), {id});
      }
      ready_[u] = {id};
      break;
    }
    case LayerKind::kLinear: {
      // y = x·Wᵀ (+ b in the GEMM epilogue), cuBLAS column-major: m = out, n = rows, k = in.
      const std::int64_t rows = n_ * in.h * in.w;
      Op op = make(i, nullptr, OpClass::kGemm, Pass::kForward);
      op.gemm = {l.out, rows, in.c, true, false, 1};
      op.flops =
          2.0 * static_cast<double>(l.out) * static_cast<double>(rows) * static_cast<double>(in.c);
      op.bytes_read = (in_el + static_cast<double>(l.out * in.c)) * ab;
      op.bytes_written = out_el * ab;
      op.params = shapes_.params[u];
      ready_[u] = {emit(std::move(op), preds)};
      break;
    }
    case LayerKind::kBatchNorm:
    case LayerKind::kLayerNorm:
      simple(OpClass::kNormalization, kNormFlops, in_el);
      break;
    case LayerKind::kRelu:
      simple(OpClass::kElementwise, kReluFlops, in_el);
      break;
    case LayerKind::kGelu:
      simple(OpClass::kElementwise, kGeluFlops, in_el);
      break;
    case LayerKind::kTanh:
      simple(OpClass::kElementwise, kTanhFlops, in_el);
      break;
    case LayerKind::kDropout:
      simple(OpClass::kElementwise, kDropoutFlops, in_el);
      step_.ops_.back().bytes_written += out_el;  // the 1-byte keep mask
      break;
    case LayerKind::kAdd: {
      const double k = static_cast<double>(l.inputs.size());
      simple(OpClass::kElementwise, k - 1.0, k * in_el);
      break;
    }
    case LayerKind::kConcat:
      // torch.cat / tf.concat: a kernel on the compute stream that reads every input once and
      // writes the output, bound by device memory bandwidth (an elementwise op without FLOPs).
      // Not a memcpy: that class is a host-device copy, priced at the host link on the copy
      // stream, which made Inception's concatenations cost 118 ms of a 256 ms Summit step.
      simple(OpClass::kElementwise, 0.0, out_el);
      break;
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool:
    case LayerKind::kAdaptiveAvgPool:
    case LayerKind::kGlobalAvgPool: {
      Op op = make(i, nullptr, OpClass::kPooling, Pass::kForward);
      std::int64_t kh = l.kernel_h, kw = l.kernel_w, sh = l.stride_h, sw = l.stride_w;
      if (l.kind == LayerKind::kGlobalAvgPool) kh = in.h, kw = in.w, sh = in.h, sw = in.w;
      if (l.kind == LayerKind::kAdaptiveAvgPool) {  // the widest of PyTorch's adaptive windows
        kh = (in.h + out.h - 1) / out.h, kw = (in.w + out.w - 1) / out.w;
        sh = in.h / out.h, sw = in.w / out.w;
      }
      op.conv = {n_,      in.c, in.h, in.w, in.c, kh, kw,    l.pad_h,
                 l.pad_w, sh,   sw,   1,    1,    1,  out.h, out.w};
      op.elements = n_ * out.elements();
      op.flops = l.kind == LayerKind::kMaxPool ? out_el * static_cast<double>(kh * kw) : in_el;
      op.bytes_read = in_el * ab;
      op.bytes_written = out_el * ab;
      ready_[u] = {emit(std::move(op), preds)};
      break;
    }
    case LayerKind::kEmbedding: {
      Op op = make(i, nullptr, OpClass::kEmbedding, Pass::kForward);
      op.elements = n_ * out.elements();
      op.bytes_read = out_el * ab + static_cast<double>(n_ * out.h) * 8.0;  // rows + int64 ids
      op.bytes_written = out_el * ab;
      op.params = shapes_.params[u];
      ready_[u] = {emit(std::move(op), preds)};
      break;
    }
    case LayerKind::kAttention:
      forward_attention(i, preds);
      break;
    case LayerKind::kFlatten:
    case LayerKind::kSelectToken:  // views: no kernel
      ready_[u] = preds;
      break;
    default:
      break;
  }
}

void StepAssembler::forward_attention(int i, const std::vector<OpId>& preds) {
  const auto u = static_cast<std::size_t>(i);
  const Layer& l = model_.layers[u];
  const TensorShape& out = shapes_.out[u];
  const std::int64_t s = out.h, d = out.c, dh = d / l.heads, b = n_ * l.heads;
  const double ab = recipe_.act_bytes;
  const double scores = static_cast<double>(b * s * s);
  const double seq_el = static_cast<double>(n_ * s * d);
  const double gemm_flops = 2.0 * static_cast<double>(s * s * dh) * static_cast<double>(b);

  if (options_.fused_attention) {
    // One kernel: Q·Kᵀ and P·V (two products, priced as one per-head GEMM with K = 2 dh), the
    // softmax and dropout in registers; Q, K, V in, the context and the probabilities out.
    Op op = make(i, ".fused", OpClass::kAttention, Pass::kForward);
    op.gemm = {s, s, 2 * dh, false, true, b};
    op.flops = 2.0 * gemm_flops;
    op.bytes_read = 3.0 * seq_el * ab;
    op.bytes_written = (seq_el + scores) * ab;
    ready_[u] = {emit(std::move(op), preds)};
    return;
  }

  Op qk = make(i, ".qk", OpClass::kGemm, Pass::kForward);  // scores = Q·Kᵀ per head
  qk.gemm = {s, s, dh, true, false, b};
  qk.flops = gemm_flops;
  qk.bytes_read = 2.0 * seq_el * ab;
  qk.bytes_written = scores * ab;
  OpId last = emit(std::move(qk), preds);

  Op sm = make(i, ".softmax", OpClass::kSoftmax, Pass::kForward);  // scale, mask, softmax
  sm.elements = b * s * s;
  sm.flops = kSoftmaxFlops * scores;
  sm.bytes_read = scores * ab;
  sm.bytes_written = scores * ab;
  last = emit(std::move(sm), {last});

  if (l.dropout_p > 0.0) {
    Op dr = make(i, ".dropout", OpClass::kElementwise, Pass::kForward);
    dr.elements = b * s * s;
    dr.flops = kDropoutFlops * scores;
    dr.bytes_read = scores * ab;
    dr.bytes_written = scores * (ab + 1.0);
    last = emit(std::move(dr), {last});
  }

  Op av = make(i, ".av", OpClass::kGemm, Pass::kForward);  // context = P·V per head
  av.gemm = {dh, s, s, false, false, b};
  av.flops = gemm_flops;
  av.bytes_read = (scores + seq_el) * ab;
  av.bytes_written = seq_el * ab;
  std::vector<OpId> av_preds = preds;
  av_preds.push_back(last);
  ready_[u] = {emit(std::move(av), av_preds)};
}

void StepAssembler::losses() {
  const double ab = recipe_.act_bytes;
  for (std::size_t u = 1; u < model_.layers.size(); ++u) {
    const Layer& l = model_.layers[u];
    const bool explicit_loss = l.kind == LayerKind::kSoftmaxCrossEntropy;
    if (!explicit_loss && !consumers_[u].empty()) continue;
    const int i = static_cast<int>(u);
    const TensorShape& in = shapes_.out[static_cast<std::size_t>(explicit_loss ? l.inputs[0] : i)];
    const double el = static_cast<double>(n_ * in.elements());
    std::vector<OpId> preds =
        explicit_loss ? ready_[static_cast<std::size_t>(l.inputs[0])] : ready_[u];
    // Softmax cross-entropy (autocast keeps it in fp32); a model without a loss layer gets a
    // scalar reduction of each output so that backward has a seed.
    Op op = make(i, explicit_loss ? nullptr : ".loss",
                 explicit_loss ? OpClass::kSoftmax : OpClass::kReduction, Pass::kLoss);
    if (explicit_loss) op.dtype = DType::kFp32;
    op.elements = n_ * in.elements();
    op.flops = (explicit_loss ? kSoftmaxFlops : 1.0) * el;
    op.bytes_read = el * ab;
    op.bytes_written = static_cast<double>(n_) * 4.0;
    loss_op_[u] = emit(std::move(op), preds);
    if (explicit_loss) ready_[u] = {loss_op_[u]};
  }
}

}  // namespace scalecast::models
