#include "models/model.hpp"

#include <fmt/format.h>

#include "common/config_error.hpp"
#include "common/config_node.hpp"

namespace scalecast::models {
namespace {

[[noreturn]] void layer_error(const Model& model, int index, const std::string& message) {
  const Layer& l = model.layers[static_cast<std::size_t>(index)];
  // In a model file, layer i is the (i-1)-th entry of `layers` (layer 0 is the input).
  const std::string path =
      l.line > 0 ? fmt::format("layers[{}]", index - 1) : fmt::format("layer '{}'", l.name);
  throw common::ConfigError(model.source, l.line, l.column, path, message);
}

// PyTorch's pooling_output_shape: floor or ceil division, and in ceil mode the last window must
// start inside the input or its left padding.
std::int64_t pooled_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p,
                         bool ceil_mode) {
  const std::int64_t span = in + 2 * p - k;
  if (span < 0) return 0;
  std::int64_t out = (span + (ceil_mode ? s - 1 : 0)) / s + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

TensorShape window_shape(const Model& model, int i, const Layer& l, const TensorShape& in,
                         std::int64_t channels, bool ceil_mode) {
  if (l.kernel_h <= 0 || l.kernel_w <= 0 || l.stride_h <= 0 || l.stride_w <= 0 || l.pad_h < 0 ||
      l.pad_w < 0) {
    layer_error(model, i, "kernel and stride must be positive and padding non-negative");
  }
  const std::int64_t p = pooled_size(in.h, l.kernel_h, l.stride_h, l.pad_h, ceil_mode);
  const std::int64_t q = pooled_size(in.w, l.kernel_w, l.stride_w, l.pad_w, ceil_mode);
  if (p <= 0 || q <= 0) {
    layer_error(model, i,
                fmt::format("kernel {}×{} does not fit the input {}×{} padded by {}×{}", l.kernel_h,
                            l.kernel_w, in.h, in.w, l.pad_h, l.pad_w));
  }
  return {channels, p, q};
}

// The largest tensor (elements per sample) and layer (parameters) a model may have: 2^40, a
// terabyte per sample at one byte each, far beyond any network, so that counts times a batch of
// up to a million stay in 64 bits (an image of 1e6 x 1e6 x 10 at batch 1e6 gave negative MACs).
constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 40;
constexpr std::int64_t kMaxLayerParams = std::int64_t{1} << 40;

void check_tensor(const Model& model, int index, const TensorShape& s) {
  const double elements =
      static_cast<double>(s.c) * static_cast<double>(s.h) * static_cast<double>(s.w);
  if (elements > static_cast<double>(kMaxTensorElements)) {
    layer_error(model, index,
                fmt::format("its output of {} ({:.3g} elements per sample) is more than the {} "
                            "a tensor may hold",
                            to_string(s), elements, common::format_count(kMaxTensorElements)));
  }
}

}  // namespace

std::string_view to_string(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::kSgdMomentum:
      return "sgd_momentum";
    case OptimizerKind::kAdam:
      return "adam";
  }
  return "?";
}

std::optional<OptimizerKind> parse_optimizer(std::string_view text) {
  if (text == "sgd_momentum" || text == "sgd") return OptimizerKind::kSgdMomentum;
  if (text == "adam" || text == "adamw") return OptimizerKind::kAdam;
  return std::nullopt;
}

int find_layer(const Model& model, std::string_view name) {
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    if (model.layers[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::vector<int>> consumers(const Model& model) {
  std::vector<std::vector<int>> c(model.layers.size());
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    for (int in : model.layers[i].inputs) {
      auto& v = c[static_cast<std::size_t>(in)];
      if (v.empty() || v.back() != static_cast<int>(i)) v.push_back(static_cast<int>(i));
    }
  }
  return c;
}

ModelShapes infer_shapes(const Model& model, std::int64_t seq_len) {
  ModelShapes r;
  const std::size_t n = model.layers.size();
  r.out.resize(n);
  r.params.assign(n, 0);
  if (n == 0 || model.layers[0].kind != LayerKind::kInput) {
    throw common::ConfigError(model.source, 0, 0, "", "a model starts with its input layer");
  }
  if (model.input.tokens) {
    r.seq_len = seq_len > 0 ? seq_len : model.input.seq_len;
    if (r.seq_len <= 0) {
      throw common::ConfigError(model.source, 0, 0, "input.tokens",
                                "the sequence length must be positive");
    }
    r.out[0] = {1, r.seq_len, 1};
  } else {
    r.out[0] = {model.input.c, model.input.h, model.input.w};
  }
  check_tensor(model, 0, r.out[0]);
  for (std::size_t u = 1; u < n; ++u) {
    const int i = static_cast<int>(u);
    const Layer& l = model.layers[u];
    if (l.inputs.empty()) layer_error(model, i, "a layer needs at least one input");
    for (int in : l.inputs) {
      if (in < 0 || in >= i) layer_error(model, i, "inputs must name earlier layers");
    }
    const TensorShape in = r.out[static_cast<std::size_t>(l.inputs[0])];
    const bool single = l.inputs.size() == 1;
    const bool multi_ok = l.kind == LayerKind::kAdd || l.kind == LayerKind::kConcat ||
                          l.kind == LayerKind::kAttention;
    if (!single && !multi_ok) {
      layer_error(
          model, i,
          fmt::format("a {} layer takes one input, got {}", to_string(l.kind), l.inputs.size()));
    }
    const bool from_ids =
        model.layers[static_cast<std::size_t>(l.inputs[0])].kind == LayerKind::kInput &&
        model.input.tokens;
    if (from_ids && l.kind != LayerKind::kEmbedding) {
      layer_error(model, i, "token ids can only feed an embedding layer");
    }
    TensorShape out = in;
    switch (l.kind) {
      case LayerKind::kInput:
        layer_error(model, i, "only layer 0 is the input");
      case LayerKind::kConv: {
        if (l.out <= 0) layer_error(model, i, "out_channels must be positive");
        if (l.groups <= 0 || in.c % l.groups != 0 || l.out % l.groups != 0) {
          layer_error(model, i,
                      fmt::format("groups {} must divide the input channels {} and out_channels {}",
                                  l.groups, in.c, l.out));
        }
        out = window_shape(model, i, l, in, l.out, false);
        break;
      }
      case LayerKind::kLinear:
        if (l.out <= 0) layer_error(model, i, "out_features must be positive");
        if (l.tied_to >= 0) {
          const Layer& e = model.layers[static_cast<std::size_t>(l.tied_to)];
          if (e.kind != LayerKind::kEmbedding || e.rows != l.out || e.out != in.c) {
            layer_error(model, i,
                        fmt::format("tied_to '{}' must be an embedding of {} rows × {} features",
                                    e.name, l.out, in.c));
          }
        }
        out = {l.out, in.h, in.w};
        break;
      case LayerKind::kMaxPool:
      case LayerKind::kAvgPool:
        out = window_shape(model, i, l, in, in.c, l.ceil_mode);
        break;
      case LayerKind::kAdaptiveAvgPool:
        if (l.out_h <= 0 || l.out_w <= 0) layer_error(model, i, "output size must be positive");
        out = {in.c, l.out_h, l.out_w};
        break;
      case LayerKind::kGlobalAvgPool:
        out = {in.c, 1, 1};
        break;
      case LayerKind::kFlatten:
        out = {in.elements(), 1, 1};
        break;
      case LayerKind::kAdd:
        for (int k : l.inputs) {
          const TensorShape& o = r.out[static_cast<std::size_t>(k)];
          if (!(o == in)) {
            layer_error(
                model, i,
                fmt::format("add needs equal shapes, got {} and {} (from '{}')", to_string(in),
                            to_string(o), model.layers[static_cast<std::size_t>(k)].name));
          }
        }
        break;
      case LayerKind::kConcat:
        out.c = 0;
        for (int k : l.inputs) {
          const TensorShape& o = r.out[static_cast<std::size_t>(k)];
          if (o.h != in.h || o.w != in.w) {
            layer_error(
                model, i,
                fmt::format("concat needs equal H×W, got {} and {} (from '{}')", to_string(in),
                            to_string(o), model.layers[static_cast<std::size_t>(k)].name));
          }
          out.c += o.c;
        }
        break;
      case LayerKind::kEmbedding:
        if (!from_ids) layer_error(model, i, "an embedding reads the token-id input");
        if (l.rows <= 0 || l.out <= 0) layer_error(model, i, "rows and dim must be positive");
        if (l.positions && r.seq_len > l.rows) {
          layer_error(
              model, i,
              fmt::format("sequence length {} exceeds the {} position rows", r.seq_len, l.rows));
        }
        out = {l.out, in.h, 1};
        break;
      case LayerKind::kAttention: {
        std::int64_t d = 0;
        if (l.inputs.size() == 1) {
          if (in.c % 3 != 0) layer_error(model, i, "a fused QKV input needs 3·d channels");
          d = in.c / 3;
        } else if (l.inputs.size() == 3) {
          d = in.c;
          for (int k : l.inputs) {
            if (!(r.out[static_cast<std::size_t>(k)] == in)) {
              layer_error(model, i, "query, key and value need equal shapes");
            }
          }
        } else {
          layer_error(model, i, "attention takes one fused QKV input or three (q, k, v)");
        }
        if (l.heads <= 0 || d % l.heads != 0) {
          layer_error(model, i, fmt::format("heads {} must divide the width {}", l.heads, d));
        }
        out = {d, in.h, in.w};
        break;
      }
      case LayerKind::kSelectToken:
        if (l.token < 0 || l.token >= in.h) {
          layer_error(model, i,
                      fmt::format("token {} is outside the sequence of {}", l.token, in.h));
        }
        out = {in.c, 1, 1};
        break;
      case LayerKind::kSoftmaxCrossEntropy:
        out = {1, 1, 1};
        break;
      default:  // normalisation, activations, dropout keep the shape
        break;
    }
    r.out[u] = out;
    check_tensor(model, i, out);
    for (const ParamTensor& t : param_tensors(l, in)) {
      if (t.params > kMaxLayerParams - r.params[u]) {
        layer_error(model, i,
                    fmt::format("its parameters are more than the {} one layer may hold",
                                common::format_count(kMaxLayerParams)));
      }
      r.params[u] += t.params;
    }
    r.total_params += r.params[u];
  }
  return r;
}

}  // namespace scalecast::models
