// to_yaml(): a model written back in the description format, one flow map per layer, only
// non-default keys, so a zoo model can be read, edited and loaded as a user file.
#include <fmt/format.h>

#include "models/model_yaml.hpp"

namespace scalecast::models {
namespace {

std::string pair_text(std::int64_t a, std::int64_t b) {
  return a == b ? fmt::format("{}", a) : fmt::format("[{}, {}]", a, b);
}

// YAML-safe name: plain when it is, double-quoted otherwise.
std::string quoted(const std::string& s) {
  for (char c : s) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '_' || c == '.' || c == '-';
    if (!plain) return fmt::format("\"{}\"", s);
  }
  return s;
}

}  // namespace

std::string to_yaml(const Model& m) {
  std::string out =
      fmt::format("# scalecast model description (models/README.md)\nname: {}\n", quoted(m.name));
  if (m.input.tokens) {
    out += fmt::format("input: {{tokens: {}}}\n", m.input.seq_len);
  } else {
    out += fmt::format("input: {{image: [{}, {}, {}]}}\n", m.input.c, m.input.h, m.input.w);
  }
  out += fmt::format("optimizer: {}\nlayers:\n", to_string(m.optimizer));
  for (std::size_t u = 1; u < m.layers.size(); ++u) {
    const Layer& l = m.layers[u];
    std::string f = fmt::format("name: {}, type: {}", quoted(l.name), to_string(l.kind));
    const bool default_input =
        l.inputs.size() == 1 &&
        (l.kind == LayerKind::kEmbedding ? l.inputs[0] == 0
                                         : l.inputs[0] == static_cast<int>(u) - 1);
    if (!default_input) {
      std::string names;
      for (int i : l.inputs) {
        names += (names.empty() ? "" : ", ") + quoted(m.layers[static_cast<std::size_t>(i)].name);
      }
      f += fmt::format(", inputs: [{}]", names);
    }
    switch (l.kind) {
      case LayerKind::kConv:
        f +=
            fmt::format(", out_channels: {}, kernel: {}", l.out, pair_text(l.kernel_h, l.kernel_w));
        if (l.stride_h != 1 || l.stride_w != 1) {
          f += fmt::format(", stride: {}", pair_text(l.stride_h, l.stride_w));
        }
        if (l.pad_h != 0 || l.pad_w != 0) {
          f += fmt::format(", padding: {}", pair_text(l.pad_h, l.pad_w));
        }
        if (l.groups != 1) f += fmt::format(", groups: {}", l.groups);
        if (l.bias) f += ", bias: true";
        break;
      case LayerKind::kLinear:
        if (l.tied_to >= 0) {
          f += fmt::format(", tied_to: {}",
                           quoted(m.layers[static_cast<std::size_t>(l.tied_to)].name));
        } else {
          f += fmt::format(", out_features: {}", l.out);
        }
        if (!l.bias) f += ", bias: false";
        break;
      case LayerKind::kDropout:
        f += fmt::format(", p: {}", l.dropout_p);
        break;
      case LayerKind::kMaxPool:
      case LayerKind::kAvgPool:
        f += fmt::format(", kernel: {}", pair_text(l.kernel_h, l.kernel_w));
        if (l.stride_h != l.kernel_h || l.stride_w != l.kernel_w) {
          f += fmt::format(", stride: {}", pair_text(l.stride_h, l.stride_w));
        }
        if (l.pad_h != 0 || l.pad_w != 0) {
          f += fmt::format(", padding: {}", pair_text(l.pad_h, l.pad_w));
        }
        if (l.ceil_mode) f += ", ceil_mode: true";
        break;
      case LayerKind::kAdaptiveAvgPool:
        f += fmt::format(", output: {}", pair_text(l.out_h, l.out_w));
        break;
      case LayerKind::kEmbedding:
        f += fmt::format(", rows: {}, dim: {}", l.rows, l.out);
        if (l.positions) f += ", lookup: positions";
        break;
      case LayerKind::kAttention:
        f += fmt::format(", heads: {}", l.heads);
        if (l.causal) f += ", causal: true";
        if (l.dropout_p > 0.0) f += fmt::format(", dropout: {}", l.dropout_p);
        break;
      case LayerKind::kSelectToken:
        if (l.token != 0) f += fmt::format(", index: {}", l.token);
        break;
      default:
        break;
    }
    out += fmt::format("  - {{{}}}\n", f);
  }
  return out;
}

}  // namespace scalecast::models
