#include "models/model_yaml.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <initializer_list>
#include <tuple>
#include <utility>

namespace scalecast::models {
namespace {

using common::ConfigNode;

std::vector<std::string> keys_of(LayerKind k) {
  std::vector<std::string> keys{"name", "type", "inputs"};
  auto more = [&](std::initializer_list<const char*> extra) {
    for (const char* e : extra) keys.emplace_back(e);
  };
  switch (k) {
    case LayerKind::kConv:
      more({"out_channels", "kernel", "stride", "padding", "groups", "bias"});
      break;
    case LayerKind::kLinear:
      more({"out_features", "bias", "tied_to"});
      break;
    case LayerKind::kDropout:
      more({"p"});
      break;
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool:
      more({"kernel", "stride", "padding", "ceil_mode"});
      break;
    case LayerKind::kAdaptiveAvgPool:
      more({"output"});
      break;
    case LayerKind::kEmbedding:
      more({"rows", "dim", "lookup"});
      break;
    case LayerKind::kAttention:
      more({"heads", "causal", "dropout"});
      break;
    case LayerKind::kSelectToken:
      more({"index"});
      break;
    default:
      break;
  }
  return keys;
}

// Layer sizes (channels, features, kernel, stride, heads, image sides, tokens): whole numbers up
// to 1,000,000, so products of them (elements, parameters, FLOPs) stay far inside int64.
constexpr std::int64_t kMaxDim = 1'000'000;
std::int64_t positive(const ConfigNode& n) { return n.as_int_in(1, kMaxDim); }

// An integer, or a [height, width] pair.
std::pair<std::int64_t, std::int64_t> pair_of(const ConfigNode& n, bool allow_zero) {
  auto one = [&](const ConfigNode& c) {
    return allow_zero ? c.as_int_in(0, kMaxDim) : positive(c);
  };
  if (n.is_sequence()) {
    const auto items = n.items();
    if (items.size() != 2) n.fail("expected an integer or a [height, width] pair");
    return {one(items[0]), one(items[1])};
  }
  if (!n.is_scalar()) n.fail("expected an integer or a [height, width] pair");
  const std::int64_t v = one(n);
  return {v, v};
}

Layer parse_layer(const ConfigNode& node, std::size_t index, const Model& model) {
  if (!node.is_map()) node.fail("expected a map with at least a 'type'");
  const ConfigNode type_node = node.required("type");
  const std::string type = type_node.as_string();
  const auto kind = parse_layer_kind(type);
  if (!kind) {
    const std::string close = common::closest_match(type, layer_kind_names());
    type_node.fail(close.empty()
                       ? fmt::format("unknown layer type '{}' (expected one of: {})", type,
                                     fmt::join(layer_kind_names(), ", "))
                       : fmt::format("unknown layer type '{}' (did you mean '{}'?)", type, close));
  }
  node.check_keys(keys_of(*kind));
  Layer l;
  l.kind = *kind;
  l.line = node.line();
  l.column = node.column();
  l.name = node.string_or("name", fmt::format("{}.{}", type, index));
  if (auto in = node.optional("inputs")) {
    const std::vector<ConfigNode> items =
        in->is_sequence() ? in->items() : std::vector<ConfigNode>{*in};
    if (items.empty()) in->fail("expected at least one layer name");
    for (const ConfigNode& item : items) {
      const std::string name = item.as_string();
      const int found = find_layer(model, name);
      if (found < 0) {
        std::vector<std::string> names;
        for (const Layer& e : model.layers) names.push_back(e.name);
        const std::string close = common::closest_match(name, names);
        item.fail(
            close.empty()
                ? fmt::format("unknown layer '{}' (inputs name earlier layers or 'input')", name)
                : fmt::format("unknown layer '{}' (did you mean '{}'?)", name, close));
      }
      l.inputs.push_back(found);
    }
  } else {
    l.inputs.push_back(static_cast<int>(model.layers.size()) - 1);
  }
  switch (l.kind) {
    case LayerKind::kConv: {
      l.out = positive(node.required("out_channels"));
      std::tie(l.kernel_h, l.kernel_w) = pair_of(node.required("kernel"), false);
      if (auto s = node.optional("stride")) std::tie(l.stride_h, l.stride_w) = pair_of(*s, false);
      if (auto p = node.optional("padding")) std::tie(l.pad_h, l.pad_w) = pair_of(*p, true);
      if (auto g = node.optional("groups")) l.groups = positive(*g);
      l.bias = node.bool_or("bias", false);
      break;
    }
    case LayerKind::kLinear:
      l.bias = node.bool_or("bias", true);
      if (auto t = node.optional("tied_to")) {
        const std::string name = t->as_string();
        l.tied_to = find_layer(model, name);
        if (l.tied_to < 0 ||
            model.layers[static_cast<std::size_t>(l.tied_to)].kind != LayerKind::kEmbedding) {
          t->fail(fmt::format("'{}' is not an earlier embedding layer", name));
        }
        l.out = model.layers[static_cast<std::size_t>(l.tied_to)].rows;
        if (auto o = node.optional("out_features"); o && positive(*o) != l.out) {
          o->fail(fmt::format("a linear tied to '{}' has {} out_features", name, l.out));
        }
      } else {
        l.out = positive(node.required("out_features"));
      }
      break;
    case LayerKind::kDropout:
      l.dropout_p = node.double_or("p", 0.5);
      if (l.dropout_p < 0.0 || l.dropout_p >= 1.0) {
        node.required("p").fail(
            fmt::format("expected a probability in [0, 1), got {}", l.dropout_p));
      }
      break;
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool:
      std::tie(l.kernel_h, l.kernel_w) = pair_of(node.required("kernel"), false);
      l.stride_h = l.kernel_h, l.stride_w = l.kernel_w;  // PyTorch: stride defaults to kernel
      if (auto s = node.optional("stride")) std::tie(l.stride_h, l.stride_w) = pair_of(*s, false);
      if (auto p = node.optional("padding")) std::tie(l.pad_h, l.pad_w) = pair_of(*p, true);
      l.ceil_mode = node.bool_or("ceil_mode", false);
      break;
    case LayerKind::kAdaptiveAvgPool:
      std::tie(l.out_h, l.out_w) = pair_of(node.required("output"), false);
      break;
    case LayerKind::kEmbedding: {
      l.rows = positive(node.required("rows"));
      l.out = positive(node.required("dim"));
      const std::string lookup = node.string_or("lookup", "tokens");
      if (lookup != "tokens" && lookup != "positions") {
        node.required("lookup").fail(
            fmt::format("expected 'tokens' or 'positions', got \"{}\"", lookup));
      }
      l.positions = lookup == "positions";
      if (!node.has("inputs")) l.inputs = {0};  // embeddings read the token ids by default
      break;
    }
    case LayerKind::kAttention:
      l.heads = positive(node.required("heads"));
      l.causal = node.bool_or("causal", false);
      l.dropout_p = node.double_or("dropout", 0.0);
      break;
    case LayerKind::kSelectToken:
      l.token = node.count_or("index", 0);
      break;
    default:
      break;
  }
  return l;
}

}  // namespace

Model parse_model(const ConfigNode& root) {
  if (!root.is_map()) root.fail("expected a model description (a map with 'input' and 'layers')");
  if (root.has("transformer")) {
    root.required("transformer")
        .fail(
            "a transformer description is not a layer graph: it trains with a `parallel:` map "
            "(models/README.md, LLM models)");
  }
  root.check_keys({"name", "input", "optimizer", "layers"});
  Model m;
  m.source = root.file();
  m.name = root.string_or("name", std::filesystem::path(root.file()).stem().string());
  const ConfigNode input = root.required("input");
  input.check_keys({"image", "tokens"});
  if (input.has("image") == input.has("tokens")) {
    input.fail("expected exactly one of 'image: [C, H, W]' or 'tokens: SEQUENCE_LENGTH'");
  }
  if (auto img = input.optional("image")) {
    const auto dims = img->is_sequence() ? img->items() : std::vector<ConfigNode>{};
    if (dims.size() != 3) img->fail("expected [channels, height, width]");
    m.input = {false, positive(dims[0]), positive(dims[1]), positive(dims[2]), 0};
  } else {
    m.input = {true, 1, 1, 1, positive(input.required("tokens"))};
  }
  m.optimizer = m.input.tokens ? OptimizerKind::kAdam : OptimizerKind::kSgdMomentum;
  if (auto opt = root.optional("optimizer")) {
    const std::string o = opt->as_string();
    const auto kind = parse_optimizer(o);
    if (!kind) opt->fail(fmt::format("expected 'sgd_momentum' or 'adam', got \"{}\"", o));
    m.optimizer = *kind;
  }
  Layer in;
  in.name = "input";
  m.layers.push_back(std::move(in));
  const ConfigNode layers = root.required("layers");
  if (!layers.is_sequence() || layers.items().empty()) {
    layers.fail("expected a non-empty list of layers");
  }
  std::size_t index = 0;
  for (const ConfigNode& node : layers.items()) {
    Layer l = parse_layer(node, index++, m);
    if (find_layer(m, l.name) >= 0) {
      (node.has("name") ? node.required("name") : node)
          .fail(fmt::format("duplicate layer name '{}'", l.name));
    }
    m.layers.push_back(std::move(l));
  }
  infer_shapes(m);  // reports impossible shapes now, at the layer's line
  return m;
}

Model load_model_string(const std::string& text, const std::string& name) {
  return parse_model(ConfigNode::load_string(text, name));
}

Model load_model_file(const std::string& path) { return parse_model(ConfigNode::load_file(path)); }

}  // namespace scalecast::models
