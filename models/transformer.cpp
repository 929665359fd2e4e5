#include "models/transformer.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "common/config_node.hpp"

namespace scalecast::models {
namespace {

using common::ConfigNode;

std::int64_t kv_dim(const TransformerSpec& m) { return m.kv_heads * m.head_dim(); }

std::int64_t ffn_gemms(const TransformerSpec& m) { return m.ffn_kind == FfnKind::kSwiGlu ? 3 : 2; }

std::int64_t norm_params(const TransformerSpec& m) {
  return m.norm == NormKind::kLayerNorm ? 2 * m.hidden : m.hidden;
}

// Weights of one block's GEMMs: Q and output projection d x d, K and V d x kv_dim, FFN.
std::int64_t layer_gemm_params(const TransformerSpec& m) {
  const std::int64_t d = m.hidden;
  return 2 * d * d + 2 * d * kv_dim(m) + ffn_gemms(m) * d * m.ffn;
}

bool looks_like_path(const std::string& s) {
  const auto ends = [&](std::string_view suf) {
    return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
  };
  return s.find('/') != std::string::npos || ends(".yaml") || ends(".yml");
}

// The largest size of each transformer dimension: far beyond any model (Llama 3.1 405B: 126
// layers, d 16,384, FFN 53,248, vocab 128,256), and small enough that every parameter and FLOP
// count stays in 64 bits (layers x (4 d^2 + 3 d FFN) <= 2^16 x 2^44). At 2^40 each, d^2 wrapped
// (hidden 2^32 gave 0 FLOPs) and the parameter count went negative.
constexpr std::int64_t kMaxLayers = std::int64_t{1} << 16;
constexpr std::int64_t kMaxHidden = std::int64_t{1} << 20;
constexpr std::int64_t kMaxFfn = std::int64_t{1} << 22;
constexpr std::int64_t kMaxVocab = std::int64_t{1} << 24;
constexpr std::int64_t kMaxSeqLen = std::int64_t{1} << 30;

std::int64_t positive(const ConfigNode& n, std::int64_t most) { return n.as_int_in(1, most); }

TransformerSpec load_root(const ConfigNode& root) {
  if (!root.is_map()) root.fail("expected a model description (a map with 'transformer')");
  root.check_keys({"name", "transformer"});
  TransformerSpec spec = parse_transformer(root.required("transformer"));
  spec.source = root.file();
  spec.name = root.string_or("name", std::filesystem::path(root.file()).stem().string());
  return spec;
}

}  // namespace

std::int64_t layer_parameter_count(const TransformerSpec& m) {
  const std::int64_t d = m.hidden;
  std::int64_t p = layer_gemm_params(m) + 2 * norm_params(m);
  if (m.linear_bias) {
    p += d + 2 * kv_dim(m) + d;                                 // QKV and output projection
    p += (m.ffn_kind == FfnKind::kSwiGlu ? 2 : 1) * m.ffn + d;  // FFN up (and gate), down
  }
  return p;
}

std::int64_t parameter_count(const TransformerSpec& m) {
  std::int64_t p = m.layers * layer_parameter_count(m);
  p += m.vocab * m.hidden;                                              // input embedding
  if (m.position == PositionKind::kLearned) p += m.seq_len * m.hidden;  // position table
  p += norm_params(m);                                                  // final norm
  if (!m.tied_embeddings) p += m.vocab * m.hidden;                      // output projection
  return p;
}

std::int64_t gemm_parameter_count(const TransformerSpec& m) {
  return m.layers * layer_gemm_params(m) + m.vocab * m.hidden;
}

double FlopCount::model_per_token() const {
  return seq_len > 0 ? 3.0 * forward / static_cast<double>(seq_len) : 0.0;
}

double model_flops_per_token(const TransformerSpec& m, std::int64_t seq_len, FlopConvention c) {
  switch (c) {
    case FlopConvention::kModel:
      return transformer_flops(m, seq_len).model_per_token();
    case FlopConvention::kCausal:
      return transformer_flops(m, seq_len, true).model_per_token();
    case FlopConvention::kAllParams:
      return 6.0 * static_cast<double>(parameter_count(m)) +
             12.0 * static_cast<double>(m.layers * m.hidden) * static_cast<double>(seq_len);
  }
  return 0.0;
}

FlopCount transformer_flops(const TransformerSpec& m, std::int64_t seq_len, bool causal_half) {
  FlopCount f;
  const double s = static_cast<double>(seq_len);
  f.seq_len = seq_len;
  f.layer_gemm = 2.0 * s * static_cast<double>(layer_gemm_params(m));
  // QK^T and AV: 2 s^2 (heads x head_dim) each.
  const double qd = static_cast<double>(m.heads * m.head_dim());
  f.layer_attention = 4.0 * s * s * qd * (causal_half ? 0.5 : 1.0);
  f.logits = 2.0 * s * static_cast<double>(m.hidden) * static_cast<double>(m.vocab);
  f.forward = static_cast<double>(m.layers) * (f.layer_gemm + f.layer_attention) + f.logits;
  return f;
}

TransformerSpec parse_transformer(const ConfigNode& node) {
  if (!node.is_map()) node.fail("expected a map of architecture numbers (layers, hidden, ...)");
  node.check_keys({"base", "citation", "layers", "hidden", "ffn", "heads", "kv_heads", "vocab",
                   "seq_len", "ffn_kind", "norm", "position", "tied_embeddings", "linear_bias"});
  TransformerSpec m;
  const bool has_base = node.has("base");
  if (has_base) {
    const ConfigNode b = node.required("base");
    const std::string name = b.as_string();
    auto spec = find_transformer(name);
    if (!spec) {
      const std::string hint = common::closest_match(name, transformer_names());
      b.fail(fmt::format("unknown transformer '{}'{}", name,
                         hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
    }
    m = *spec;
    m.citation = "based on " + name + ": " + m.citation;
  }
  const auto size = [&](std::string_view key, std::int64_t& field, std::int64_t most) {
    if (auto n = node.optional(key)) {
      field = positive(*n, most);
    } else if (!has_base) {
      node.required(key);  // fails: "missing key"
    }
  };
  size("layers", m.layers, kMaxLayers);
  size("hidden", m.hidden, kMaxHidden);
  size("heads", m.heads, kMaxHidden);
  size("vocab", m.vocab, kMaxVocab);
  size("seq_len", m.seq_len, kMaxSeqLen);
  if (auto n = node.optional("ffn_kind")) {
    const std::string k = n->as_string();
    if (k == "gelu")
      m.ffn_kind = FfnKind::kGelu;
    else if (k == "swiglu")
      m.ffn_kind = FfnKind::kSwiGlu;
    else
      n->fail(fmt::format("expected 'gelu' (2 GEMMs) or 'swiglu' (3 GEMMs), got \"{}\"", k));
  }
  if (auto n = node.optional("ffn")) {
    m.ffn = positive(*n, kMaxFfn);
  } else if (!has_base) {
    if (m.ffn_kind == FfnKind::kSwiGlu) node.required("ffn");  // no conventional default
    m.ffn = 4 * m.hidden;
  }
  m.kv_heads = has_base ? m.kv_heads : m.heads;
  if (auto n = node.optional("kv_heads")) m.kv_heads = positive(*n, kMaxHidden);
  if (auto n = node.optional("norm")) {
    const std::string k = n->as_string();
    if (k == "layernorm")
      m.norm = NormKind::kLayerNorm;
    else if (k == "rmsnorm")
      m.norm = NormKind::kRmsNorm;
    else
      n->fail(fmt::format("expected 'layernorm' or 'rmsnorm', got \"{}\"", k));
  }
  if (auto n = node.optional("position")) {
    const std::string k = n->as_string();
    if (k == "learned")
      m.position = PositionKind::kLearned;
    else if (k == "rope")
      m.position = PositionKind::kRope;
    else
      n->fail(fmt::format("expected 'learned' or 'rope', got \"{}\"", k));
  }
  m.tied_embeddings = node.bool_or("tied_embeddings", m.tied_embeddings);
  m.linear_bias = node.bool_or("linear_bias", m.linear_bias);
  m.citation = node.string_or("citation", m.citation);
  // Shape rules, reported at the key that breaks them.
  const auto at = [&](std::string_view key) { return node.has(key) ? node.required(key) : node; };
  if (m.hidden % m.heads != 0) {
    at("heads").fail(fmt::format("{} heads do not divide the hidden size {}", m.heads, m.hidden));
  }
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0) {
    at("kv_heads")
        .fail(fmt::format("{} KV heads must divide the {} query heads (GQA groups)", m.kv_heads,
                          m.heads));
  }
  return m;
}

std::string position_table_problem(const TransformerSpec& m, std::int64_t seq_len) {
  if (m.position != PositionKind::kLearned || m.seq_len <= 0 || seq_len <= m.seq_len) return "";
  return fmt::format(
      "expected at most {} tokens, the learned position table of {} (a model with rotary "
      "positions has no such limit), got {}",
      m.seq_len, m.name, seq_len);
}

std::string describe(const TransformerSpec& m) {
  return fmt::format(
      "{} layers, d {}, FFN {} ({}), {} heads / {} KV heads (head dim {}), vocab {}, seq {}, {}, "
      "{}, {} embeddings, {}",
      m.layers, m.hidden, m.ffn, m.ffn_kind == FfnKind::kSwiGlu ? "SwiGLU" : "GeLU", m.heads,
      m.kv_heads, m.head_dim(), m.vocab, m.seq_len,
      m.norm == NormKind::kRmsNorm ? "RMSNorm" : "LayerNorm",
      m.position == PositionKind::kRope ? "RoPE" : "learned positions",
      m.tied_embeddings ? "tied" : "untied", m.linear_bias ? "biases" : "no biases");
}

std::string to_yaml(const TransformerSpec& m) {
  return fmt::format(
      "name: {}\ntransformer:\n  citation: \"{}\"\n  layers: {}\n  hidden: {}\n  ffn: {}\n"
      "  heads: {}\n  kv_heads: {}\n  vocab: {}\n  seq_len: {}\n  ffn_kind: {}\n  norm: {}\n"
      "  position: {}\n  tied_embeddings: {}\n  linear_bias: {}\n",
      m.name, m.citation, m.layers, m.hidden, m.ffn, m.heads, m.kv_heads, m.vocab, m.seq_len,
      m.ffn_kind == FfnKind::kSwiGlu ? "swiglu" : "gelu",
      m.norm == NormKind::kRmsNorm ? "rmsnorm" : "layernorm",
      m.position == PositionKind::kRope ? "rope" : "learned", m.tied_embeddings, m.linear_bias);
}

TransformerSpec load_transformer_string(const std::string& text, const std::string& name) {
  return load_root(ConfigNode::load_string(text, name));
}

TransformerSpec load_transformer_file(const std::string& path) {
  return load_root(ConfigNode::load_file(path));
}

std::optional<TransformerSpec> load_transformer(const std::string& name_or_path) {
  if (!looks_like_path(name_or_path)) return find_transformer(name_or_path);
  if (!std::filesystem::is_regular_file(name_or_path)) return std::nullopt;
  const ConfigNode root = ConfigNode::load_file(name_or_path);
  if (!root.is_map() || !root.has("transformer")) return std::nullopt;
  return load_root(root);
}

}  // namespace scalecast::models
