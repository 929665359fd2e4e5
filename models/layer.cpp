#include "models/layer.hpp"

#include <fmt/format.h>

#include <array>
#include <initializer_list>
#include <limits>
#include <utility>

namespace scalecast::models {
namespace {

constexpr std::array<std::pair<LayerKind, std::string_view>, 20> kNames{{
    {LayerKind::kInput, "input"},
    {LayerKind::kConv, "conv"},
    {LayerKind::kLinear, "linear"},
    {LayerKind::kBatchNorm, "batch_norm"},
    {LayerKind::kLayerNorm, "layer_norm"},
    {LayerKind::kRelu, "relu"},
    {LayerKind::kGelu, "gelu"},
    {LayerKind::kTanh, "tanh"},
    {LayerKind::kDropout, "dropout"},
    {LayerKind::kAdd, "add"},
    {LayerKind::kConcat, "concat"},
    {LayerKind::kMaxPool, "max_pool"},
    {LayerKind::kAvgPool, "avg_pool"},
    {LayerKind::kAdaptiveAvgPool, "adaptive_avg_pool"},
    {LayerKind::kGlobalAvgPool, "global_avg_pool"},
    {LayerKind::kFlatten, "flatten"},
    {LayerKind::kEmbedding, "embedding"},
    {LayerKind::kAttention, "attention"},
    {LayerKind::kSelectToken, "select_token"},
    {LayerKind::kSoftmaxCrossEntropy, "softmax_cross_entropy"},
}};

}  // namespace

std::string_view to_string(LayerKind kind) {
  for (const auto& [k, n] : kNames) {
    if (k == kind) return n;
  }
  return "?";
}

std::optional<LayerKind> parse_layer_kind(std::string_view text) {
  for (const auto& [k, n] : kNames) {
    if (n == text && k != LayerKind::kInput) return k;
  }
  return std::nullopt;
}

const std::vector<std::string>& layer_kind_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [k, n] : kNames) {
      if (k != LayerKind::kInput) v.emplace_back(n);
    }
    return v;
  }();
  return names;
}

std::string to_string(const TensorShape& s) {
  if (s.h == 1 && s.w == 1) return fmt::format("{}", s.c);
  if (s.w == 1) return fmt::format("{}×{}", s.c, s.h);
  return fmt::format("{}×{}×{}", s.c, s.h, s.w);
}

namespace {

// The product of non-negative factors, or INT64_MAX where it does not fit (infer_shapes() refuses
// a layer that large; a wrapped count went negative).
std::int64_t saturating_product(std::initializer_list<std::int64_t> factors) {
  std::int64_t p = 1;
  for (const std::int64_t f : factors) {
    if (__builtin_mul_overflow(p, f, &p)) return std::numeric_limits<std::int64_t>::max();
  }
  return p;
}

}  // namespace

std::vector<ParamTensor> param_tensors(const Layer& layer, const TensorShape& input) {
  std::vector<ParamTensor> t;
  switch (layer.kind) {
    case LayerKind::kConv:
      t.push_back({"weight", saturating_product({layer.out, input.c / layer.groups, layer.kernel_h,
                                                 layer.kernel_w})});
      if (layer.bias) t.push_back({"bias", layer.out});
      break;
    case LayerKind::kLinear:
      if (layer.tied_to < 0) t.push_back({"weight", saturating_product({layer.out, input.c})});
      if (layer.bias) t.push_back({"bias", layer.out});
      break;
    case LayerKind::kBatchNorm:
    case LayerKind::kLayerNorm:
      // γ and β per channel; BatchNorm's running mean/var are buffers, not parameters
      // (docs/sources.md, §1).
      t.push_back({"weight", input.c});
      t.push_back({"bias", input.c});
      break;
    case LayerKind::kEmbedding:
      t.push_back({"weight", saturating_product({layer.rows, layer.out})});
      break;
    default:
      break;
  }
  return t;
}

}  // namespace scalecast::models
