// The transformer zoo: parameter counts derived from the architecture numbers must equal the
// published checkpoints ([Llama-HF-configs] safetensors totals; [Narayanan-SC21] Tables 1-2;
// [Korthikanti-MLSys23] Table 3), and forward FLOPs must equal the closed forms of
// [Narayanan-SC21] Eq. 3 and the "6N + 12 l h s" per-token rule ([PaLM] Appendix B).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>

#include "common/config_error.hpp"
#include "models/model_yaml.hpp"
#include "models/transformer.hpp"
#include "models/zoo.hpp"

using namespace scalecast::models;

namespace {

TransformerSpec zoo(const char* name) {
  auto m = find_transformer(name);
  REQUIRE_MESSAGE(m.has_value(), name);
  return *m;
}

void check_count(const char* name, std::int64_t expected) {
  const std::int64_t got = parameter_count(zoo(name));
  MESSAGE(fmt::format("{}: expected {}, got {}", name, expected, got));
  CHECK(got == expected);
}

std::string error_of(const std::string& text) {
  try {
    load_transformer_string(text, "m.yaml");
  } catch (const scalecast::common::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("Llama parameter counts equal the published checkpoints") {
    check_count("llama3_8b", 8'030'261'248);
    check_count("llama31_8b", 8'030'261'248);
    check_count("llama3_70b", 70'553'706'496);
    check_count("llama31_70b", 70'553'706'496);
    check_count("llama31_405b", 405'853'388'800);
    check_count("llama2_13b", 13'015'864'320);
    check_count("llama2_70b", 68'976'648'192);
  }

  TEST_CASE("Llama 3 8B parameter breakdown") {
    const TransformerSpec m = zoo("llama3_8b");
    // Per block: Q, O 4096^2; K, V 4096 x 1024 (8 KV heads of 128); FFN 3 x 4096 x 14336; two
    // RMSNorms of 4096 = 218,112,000.
    CHECK(layer_parameter_count(m) == 218'112'000);
    CHECK(m.head_dim() == 128);
  }

  TEST_CASE("Megatron GPT shapes match the papers' sizes") {
    // GPT-3 175B, Megatron shape: 174.6B [Narayanan-SC21] Table 2. P = 12 l h^2 + 13 l h +
    // (V + s) h + 2h (final LayerNorm).
    const TransformerSpec g = zoo("gpt3_175b");
    const double l = 96, h = 12288, V = 51200, s = 2048;
    CHECK(static_cast<double>(parameter_count(g)) ==
          12 * l * h * h + 13 * l * h + (V + s) * h + 2 * h);
    CHECK(std::round(static_cast<double>(parameter_count(g)) / 1e8) / 10 == doctest::Approx(174.6));
    const std::pair<const char*, double> sizes[] = {
        {"gpt3_1p7b", 1.7},     {"gpt3_3p6b", 3.6},     {"gpt3_7p5b", 7.5},
        {"gpt3_18p4b", 18.4},   {"gpt3_39p1b", 39.1},   {"gpt3_76p1b", 76.1},
        {"gpt3_145p6b", 145.6}, {"gpt3_310p1b", 310.1}, {"gpt3_530b", 529.6}};
    for (const auto& [name, billions] : sizes) {
      const double got = static_cast<double>(parameter_count(zoo(name))) / 1e9;
      MESSAGE(fmt::format("{}: published {:.1f}B, computed {:.3f}B", name, billions, got));
      CHECK(std::abs(got - billions) <= 0.05);  // the papers round to 0.1B
    }
    // [Korthikanti-MLSys23] names these "22B" and "1T".
    CHECK(std::round(static_cast<double>(parameter_count(zoo("gpt3_22b"))) / 1e9) == 22);
    CHECK(std::round(static_cast<double>(parameter_count(zoo("gpt3_1t"))) / 1e11) == 10);
    // Nemotron-4 340B: 9.4B embedding + 331.6B non-embedding [Nemotron4-340B] (341B).
    const double n = static_cast<double>(parameter_count(zoo("nemotron4_340b"))) / 1e9;
    CHECK(std::abs(n - 341.0) < 0.1);
  }

  TEST_CASE("forward FLOPs equal Narayanan et al. Eq. 3 (full recomputation = 4x forward)") {
    // F = 96 B s l h^2 (1 + s/6h + V/16lh) per iteration of B sequences; the logits are not
    // recomputed (3x), every block is (4x).
    for (const char* name : {"gpt3_175b", "gpt3_1p7b", "gpt3_530b", "gpt3_1t"}) {
      const TransformerSpec m = zoo(name);
      const double s = 2048, l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden),
                   V = static_cast<double>(m.vocab);
      const FlopCount f = transformer_flops(m, 2048);
      const double eq3 = 96 * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
      const double ours = 4 * (f.forward - f.logits) + 3 * f.logits;
      MESSAGE(fmt::format("{}: Eq. 3 {:.6e}, ours {:.6e}", name, eq3, ours));
      CHECK(ours == doctest::Approx(eq3).epsilon(1e-12));
    }
  }

  TEST_CASE("model FLOPs per token equal 6N + 12 l h s") {
    // N = the GEMM weights (the input embedding is a lookup); attention 12 l h s per token.
    for (const std::string& name : transformer_names()) {
      const TransformerSpec m = zoo(name.c_str());
      const double s = static_cast<double>(m.seq_len);
      const double closed = 6.0 * static_cast<double>(gemm_parameter_count(m)) +
                            12.0 * static_cast<double>(m.layers * m.hidden) * s;
      const FlopCount f = transformer_flops(m, m.seq_len);
      CHECK_MESSAGE(f.model_per_token() == doctest::Approx(closed).epsilon(1e-12), name);
      // Causal half: only the attention terms halve.
      const FlopCount c = transformer_flops(m, m.seq_len, true);
      CHECK(c.model_per_token() ==
            doctest::Approx(closed - 6.0 * static_cast<double>(m.layers * m.hidden) * s)
                .epsilon(1e-12));
    }
    // Llama 3 8B at 8,192 tokens: 6 x 7,504,658,432 + 12 x 32 x 4096 x 8192 = 5.7913e10.
    const TransformerSpec m = zoo("llama3_8b");
    CHECK(gemm_parameter_count(m) == 8'030'261'248 - 525'336'576 - 65 * 4096);
    CHECK(transformer_flops(m, 8192).model_per_token() ==
          doctest::Approx(6.0 * 7'504'658'432 + 12.0 * 32 * 4096 * 8192).epsilon(1e-12));
  }

  TEST_CASE("transformer YAML: a spec, a zoo base with overrides, file:line errors") {
    const TransformerSpec m = load_transformer_string(
        "name: mini\ntransformer: {layers: 2, hidden: 64, ffn: 256, heads: 4, kv_heads: 2,\n"
        "  vocab: 1000, seq_len: 128, ffn_kind: swiglu, norm: rmsnorm, position: rope,\n"
        "  tied_embeddings: false, linear_bias: false}\n",
        "m.yaml");
    CHECK(m.name == "mini");
    CHECK(m.source == "m.yaml");
    // 2 x (2*64*64 + 2*64*32 + 3*64*256 + 2*64) + 2*1000*64 + 64.
    CHECK(parameter_count(m) == 2 * (8192 + 4096 + 49152 + 128) + 128000 + 64);
    const TransformerSpec b =
        load_transformer_string("transformer: {base: llama3_8b, layers: 16}\n", "half.yaml");
    CHECK(b.name == "half");
    CHECK(b.layers == 16);
    CHECK(b.kv_heads == 8);
    CHECK(b.ffn == 14336);

    CHECK(error_of("transformer: {layers: 2, hidden: 64, heads: 4, vocab: 10, seq_len: 8, "
                   "ffn_kind: relu}\n")
              .find("m.yaml:1:") == 0);
    CHECK(error_of("transformer: {layers: 2, hidden: 64, heads: 4, vocab: 10, seq_len: 8, "
                   "ffn_kind: relu}\n")
              .find("transformer.ffn_kind: expected 'gelu'") != std::string::npos);
    const std::string heads = error_of(
        "transformer:\n  layers: 2\n  hidden: 64\n  heads: 5\n  vocab: 10\n  seq_len: 8\n");
    MESSAGE(heads);
    CHECK(heads.find("m.yaml:4:10: error: transformer.heads: 5 heads do not divide the hidden "
                     "size 64") == 0);
    const std::string kv = error_of(
        "transformer: {layers: 2, hidden: 64, heads: 4, kv_heads: 3, vocab: 10, seq_len: 8}\n");
    CHECK(kv.find("transformer.kv_heads: 3 KV heads must divide the 4 query heads") !=
          std::string::npos);
    CHECK(error_of("transformer: {hidden: 64, heads: 4, vocab: 10, seq_len: 8}\n").find("layers") !=
          std::string::npos);
    CHECK(error_of("transformer: {layers: 0, hidden: 64, heads: 4, vocab: 10, seq_len: 8}\n")
              .find("transformer.layers") != std::string::npos);
    // Sizes that make a 64-bit count wrap: hidden 2^32 gave d^2 = 0 (0 FLOPs), 1e6 layers of
    // d 1e6 a negative parameter count.
    CHECK(error_of("transformer: {layers: 2, hidden: 4294967296, heads: 1, vocab: 10, "
                   "seq_len: 8}\n")
              .find("transformer.hidden: expected at most 1,048,576") != std::string::npos);
    CHECK(error_of("transformer: {layers: 1000000, hidden: 64, heads: 4, vocab: 10, seq_len: 8}\n")
              .find("transformer.layers: expected at most 65,536") != std::string::npos);
    CHECK(error_of("transformer: {layers: 2, hidden: 64, heads: 4, vocab: 1000000000, "
                   "seq_len: 8}\n")
              .find("transformer.vocab: expected at most 16,777,216") != std::string::npos);
    {
      // The largest sizes allowed still count in 64 bits: positive and as the formula gives.
      const TransformerSpec big = load_transformer_string(
          "transformer: {layers: 65536, hidden: 1048576, ffn: 4194304, ffn_kind: swiglu, heads: "
          "1, vocab: 16777216, seq_len: 1073741824, position: learned, tied_embeddings: false}\n",
          "big.yaml");
      const double d = 1048576.0, f = 4194304.0, l = 65536.0, v = 16777216.0, s = 1073741824.0;
      const double block = 4.0 * d * d + 3.0 * d * f + (d + 2.0 * d + d) + (2.0 * f + d) +
                           4.0 * d;  // GEMMs, biases, two LayerNorms
      CHECK(parameter_count(big) > 0);
      CHECK(static_cast<double>(parameter_count(big)) ==
            doctest::Approx(l * block + 2.0 * v * d + s * d + 2.0 * d).epsilon(1e-12));
    }
    CHECK(error_of("transformer: {base: llama3_9b}\n").find("did you mean 'llama3_8b'") !=
          std::string::npos);
    CHECK(error_of("transformer: {layers: 2, hidden: 64, heads: 4, vocab: 10, seq_len: 8, "
                   "ffn_kind: swiglu}\n")
              .find("ffn") != std::string::npos);  // SwiGLU has no conventional FFN size
    CHECK(error_of("transformer: {layers: 2, hidden: 64, heads: 4, vocab: 10, seq_len: 8, "
                   "windows: 3}\n")
              .find("windows") != std::string::npos);
  }

  TEST_CASE("to_yaml round trip of every zoo transformer") {
    for (const std::string& name : transformer_names()) {
      const TransformerSpec a = zoo(name.c_str());
      const TransformerSpec b = load_transformer_string(to_yaml(a), "x.yaml");
      CHECK(b.name == a.name);
      CHECK(parameter_count(b) == parameter_count(a));
      CHECK(describe(b) == describe(a));
    }
  }

  TEST_CASE("zoo lookups: transformers are not layer-graph models and vice versa") {
    CHECK_FALSE(find_transformer("resnet50").has_value());
    CHECK(load_transformer("llama3_70b").has_value());
    CHECK_FALSE(load_transformer("resnet50").has_value());
    CHECK_THROWS_WITH_AS(zoo_model("llama3_8b"), doctest::Contains("transformer"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(
        load_model_string("transformer: {base: llama3_8b}\n", "t.yaml"),
        doctest::Contains("error: transformer: a transformer description is not a layer graph"),
        scalecast::common::ConfigError);
  }
}
