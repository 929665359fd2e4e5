#include "models/model_builder.hpp"

#include <utility>

namespace scalecast::models {

ModelBuilder::ModelBuilder(std::string name, ModelInput input, OptimizerKind optimizer) {
  model_.name = std::move(name);
  model_.input = input;
  model_.optimizer = optimizer;
  Layer in;
  in.name = "input";
  in.kind = LayerKind::kInput;
  model_.layers.push_back(std::move(in));
}

int ModelBuilder::append(Layer layer) {
  if (layer.inputs.empty()) layer.inputs.push_back(last());
  model_.layers.push_back(std::move(layer));
  return last();
}

int ModelBuilder::simple(std::string name, LayerKind kind, int from) {
  Layer l;
  l.name = std::move(name);
  l.kind = kind;
  if (from >= 0) l.inputs.push_back(from);
  return append(std::move(l));
}

int ModelBuilder::conv(std::string name, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                       std::int64_t pad, bool bias, int from) {
  return conv(std::move(name), out, kernel, kernel, stride, stride, pad, pad, bias, from);
}

int ModelBuilder::conv(std::string name, std::int64_t out, std::int64_t kernel_h,
                       std::int64_t kernel_w, std::int64_t stride_h, std::int64_t stride_w,
                       std::int64_t pad_h, std::int64_t pad_w, bool bias, int from) {
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::kConv;
  l.out = out;
  l.kernel_h = kernel_h, l.kernel_w = kernel_w;
  l.stride_h = stride_h, l.stride_w = stride_w;
  l.pad_h = pad_h, l.pad_w = pad_w;
  l.bias = bias;
  if (from >= 0) l.inputs.push_back(from);
  return append(std::move(l));
}

int ModelBuilder::linear(std::string name, std::int64_t out, bool bias, int from) {
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::kLinear;
  l.out = out;
  l.bias = bias;
  if (from >= 0) l.inputs.push_back(from);
  return append(std::move(l));
}

int ModelBuilder::tied_linear(std::string name, int embedding, bool bias, int from) {
  const int i =
      linear(std::move(name), model_.layers[static_cast<std::size_t>(embedding)].rows, bias, from);
  model_.layers.back().tied_to = embedding;
  return i;
}

int ModelBuilder::batch_norm(std::string name, int from) {
  return simple(std::move(name), LayerKind::kBatchNorm, from);
}
int ModelBuilder::layer_norm(std::string name, int from) {
  return simple(std::move(name), LayerKind::kLayerNorm, from);
}
int ModelBuilder::relu(std::string name, int from) {
  return simple(std::move(name), LayerKind::kRelu, from);
}
int ModelBuilder::gelu(std::string name, int from) {
  return simple(std::move(name), LayerKind::kGelu, from);
}
int ModelBuilder::tanh(std::string name, int from) {
  return simple(std::move(name), LayerKind::kTanh, from);
}
int ModelBuilder::global_avg_pool(std::string name, int from) {
  return simple(std::move(name), LayerKind::kGlobalAvgPool, from);
}
int ModelBuilder::flatten(std::string name, int from) {
  return simple(std::move(name), LayerKind::kFlatten, from);
}
int ModelBuilder::loss(std::string name, int from) {
  return simple(std::move(name), LayerKind::kSoftmaxCrossEntropy, from);
}

int ModelBuilder::dropout(std::string name, double p, int from) {
  const int i = simple(std::move(name), LayerKind::kDropout, from);
  model_.layers.back().dropout_p = p;
  return i;
}

int ModelBuilder::max_pool(std::string name, std::int64_t kernel, std::int64_t stride,
                           std::int64_t pad, bool ceil_mode, int from) {
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::kMaxPool;
  l.kernel_h = l.kernel_w = kernel;
  l.stride_h = l.stride_w = stride;
  l.pad_h = l.pad_w = pad;
  l.ceil_mode = ceil_mode;
  if (from >= 0) l.inputs.push_back(from);
  return append(std::move(l));
}

int ModelBuilder::avg_pool(std::string name, std::int64_t kernel, std::int64_t stride,
                           std::int64_t pad, int from) {
  const int i = max_pool(std::move(name), kernel, stride, pad, false, from);
  model_.layers.back().kind = LayerKind::kAvgPool;
  return i;
}

int ModelBuilder::adaptive_avg_pool(std::string name, std::int64_t out_h, std::int64_t out_w,
                                    int from) {
  const int i = simple(std::move(name), LayerKind::kAdaptiveAvgPool, from);
  model_.layers.back().out_h = out_h;
  model_.layers.back().out_w = out_w;
  return i;
}

int ModelBuilder::add(std::string name, std::vector<int> inputs) {
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::kAdd;
  l.inputs = std::move(inputs);
  return append(std::move(l));
}

int ModelBuilder::concat(std::string name, std::vector<int> inputs) {
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::kConcat;
  l.inputs = std::move(inputs);
  return append(std::move(l));
}

int ModelBuilder::embedding(std::string name, std::int64_t rows, std::int64_t dim, bool positions) {
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::kEmbedding;
  l.rows = rows;
  l.out = dim;
  l.positions = positions;
  l.inputs.push_back(kInput);
  return append(std::move(l));
}

int ModelBuilder::attention(std::string name, std::int64_t heads, bool causal, double dropout_p,
                            std::vector<int> inputs) {
  Layer l;
  l.name = std::move(name);
  l.kind = LayerKind::kAttention;
  l.heads = heads;
  l.causal = causal;
  l.dropout_p = dropout_p;
  l.inputs = std::move(inputs);
  return append(std::move(l));
}

int ModelBuilder::select_token(std::string name, std::int64_t token, int from) {
  const int i = simple(std::move(name), LayerKind::kSelectToken, from);
  model_.layers.back().token = token;
  return i;
}

Model ModelBuilder::build() && { return std::move(model_); }

}  // namespace scalecast::models
