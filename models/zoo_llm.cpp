// The transformer zoo: LLM architectures as their papers and released configurations give them
// (sources in docs/sources.md). Parameter counts are not stored: parameter_count() derives them
// from these numbers, and tests/models/test_llm_models.cpp checks them against the published
// checkpoints.
#include <algorithm>

#include "models/transformer.hpp"

namespace scalecast::models {
namespace {

// Megatron-LM GPT (Narayanan et al. 2021; Korthikanti et al. 2022): learned positions, LayerNorm,
// GeLU FFN of 4d, biases, tied embeddings, vocabulary 51,200 (GPT-2's 50,257 padded), seq 2,048.
TransformerSpec megatron_gpt(std::string name, std::int64_t layers, std::int64_t hidden,
                             std::int64_t heads, std::string citation) {
  TransformerSpec m;
  m.name = std::move(name);
  m.citation = std::move(citation);
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = 4 * hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.vocab = 51200;
  m.seq_len = 2048;
  return m;
}

// Llama 2 / 3 (Touvron et al. 2023; Dubey et al. 2024): RoPE, RMSNorm, SwiGLU, no biases,
// untied output projection.
TransformerSpec llama(std::string name, std::int64_t layers, std::int64_t hidden, std::int64_t ffn,
                      std::int64_t heads, std::int64_t kv_heads, std::int64_t vocab,
                      std::int64_t seq_len, std::string citation) {
  TransformerSpec m;
  m.name = std::move(name);
  m.citation = std::move(citation);
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = ffn;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.vocab = vocab;
  m.seq_len = seq_len;
  m.ffn_kind = FfnKind::kSwiGlu;
  m.norm = NormKind::kRmsNorm;
  m.position = PositionKind::kRope;
  m.tied_embeddings = false;
  m.linear_bias = false;
  return m;
}

std::vector<TransformerSpec> make_zoo() {
  const std::string t1 = "[Narayanan-SC21] Table 1";
  std::vector<TransformerSpec> z = {
      megatron_gpt("gpt3_1p7b", 24, 2304, 24, t1),
      megatron_gpt("gpt3_3p6b", 30, 3072, 32, t1),
      megatron_gpt("gpt3_7p5b", 36, 4096, 32, t1),
      megatron_gpt("gpt3_18p4b", 40, 6144, 48, t1),
      megatron_gpt("gpt3_39p1b", 48, 8192, 64, t1),
      megatron_gpt("gpt3_76p1b", 60, 10240, 80, t1),
      megatron_gpt("gpt3_145p6b", 80, 12288, 96, t1),
      megatron_gpt("gpt3_310p1b", 96, 16384, 128, t1),
      megatron_gpt("gpt3_22b", 48, 6144, 64, "[Korthikanti-MLSys23] Table 3"),
      megatron_gpt("gpt3_175b", 96, 12288, 96,
                   "[GPT3-paper] Table 2.1; Megatron shape 174.6B [Narayanan-SC21] Table 2"),
      megatron_gpt("gpt3_530b", 105, 20480, 128,
                   "[Korthikanti-MLSys23] Table 3; 529.6B [Narayanan-SC21] Table 2"),
      megatron_gpt("gpt3_1t", 128, 25600, 160, "[Korthikanti-MLSys23] Table 3"),
  };
  // NeMo's GPT-3 20B: GPT-2 BPE (50,257) padded to a multiple of 128.
  TransformerSpec g20 =
      megatron_gpt("gpt3_20b", 44, 6144, 48, "[NeMo-GPT3-20B] conf/training/gpt3/20b.yaml");
  g20.vocab = 50304;
  z.push_back(g20);
  TransformerSpec ms = megatron_gpt("megascale_175b", 96, 12288, 128,
                                    "[MegaScale] Table 2 (Megatron-LM baseline model)");
  ms.vocab = 64000;
  z.push_back(ms);
  const std::string l2 = "[Llama2-paper] Table 1; [Llama-HF-configs] config.json";
  const std::string l3 = "[Llama3-paper] Table 3; [Llama-HF-configs] config.json";
  z.push_back(llama("llama2_13b", 40, 5120, 13824, 40, 40, 32000, 4096, l2));
  z.push_back(llama("llama2_70b", 80, 8192, 28672, 64, 8, 32000, 4096, l2));
  z.push_back(llama("llama3_8b", 32, 4096, 14336, 32, 8, 128256, 8192, l3));
  z.push_back(llama("llama3_70b", 80, 8192, 28672, 64, 8, 128256, 8192, l3));
  // Llama 3.1 changes RoPE scaling and the context length of the last training phase, not the
  // shapes: 8B and 70B are the Llama 3 ones, trained at 8,192 tokens.
  z.push_back(llama("llama31_8b", 32, 4096, 14336, 32, 8, 128256, 8192, l3));
  z.push_back(llama("llama31_70b", 80, 8192, 28672, 64, 8, 128256, 8192, l3));
  z.push_back(llama("llama31_405b", 126, 16384, 53248, 128, 8, 128256, 8192, l3));
  // Nemotron-4 340B: GQA, RoPE, untied, no biases, squared-ReLU FFN of 4d (2 GEMMs, as kGelu).
  TransformerSpec n =
      llama("nemotron4_340b", 96, 18432, 73728, 96, 8, 256000, 4096, "[Nemotron4-340B] Table 1");
  n.ffn_kind = FfnKind::kGelu;
  n.norm = NormKind::kLayerNorm;
  z.push_back(n);
  return z;
}

const std::vector<TransformerSpec>& zoo() {
  static const std::vector<TransformerSpec> z = make_zoo();
  return z;
}

}  // namespace

std::optional<TransformerSpec> find_transformer(std::string_view name) {
  const auto& z = zoo();
  auto it = std::find_if(z.begin(), z.end(), [&](const auto& m) { return m.name == name; });
  if (it == z.end()) return std::nullopt;
  return *it;
}

std::vector<std::string> transformer_names() {
  std::vector<std::string> names;
  for (const auto& m : zoo()) names.push_back(m.name);
  return names;
}

}  // namespace scalecast::models
