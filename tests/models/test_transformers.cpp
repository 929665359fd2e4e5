// BERT-large and GPT-2: parameter breakdown, exact matmul MACs per sequence ([BERT-config],
// [GPT-2-hparams] [computed]), attention as batched GEMMs whose backward is twice the forward, tied
// embeddings.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>

#include "common/config_error.hpp"
#include "models/training_step.hpp"
#include "models/zoo.hpp"

using namespace scalecast::models;

namespace {

StepOptions seq(std::int64_t s) {
  StepOptions o;
  o.seq_len = s;
  return o;
}

// [BERT-config], [GPT-2-hparams]; convention: L·(4·S·d² + 2·S·d·d_ff + 2·S²·d) MACs per sequence.
double body_macs(double layers, double s, double d) {
  return layers * (4 * s * d * d + 2 * s * d * 4 * d + 2 * s * s * d);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("BERT-large parameter breakdown") {
    const Model m = zoo_model("bert_large");
    const ModelShapes s = infer_shapes(m);
    std::int64_t embeddings = 0, layer0 = 0, pooler = 0;
    for (std::size_t i = 0; i < m.layers.size(); ++i) {
      const std::string& n = m.layers[i].name;
      if (n.starts_with("embeddings.")) embeddings += s.params[i];
      if (n.starts_with("encoder.layer.0.")) layer0 += s.params[i];
      if (n.starts_with("pooler.")) pooler += s.params[i];
    }
    MESSAGE(
        fmt::format("embeddings expected 31782912 actual {}; per layer expected 12596224 "
                    "actual {}; pooler expected 1049600 actual {}",
                    embeddings, layer0, pooler));
    CHECK(embeddings == 31'782'912);  // [BERT-config], [GPT-2-hparams] [computed]
    CHECK(layer0 == 12'596'224);
    CHECK(pooler == 1'049'600);
  }

  TEST_CASE("BERT-large forward matmul MACs per sequence at S 128 and 512") {
    for (std::int64_t s : {128, 512}) {
      const TrainingStep step = build_training_step(zoo_model("bert_large"), seq(s));
      // Reference body MACs ([BERT-config], [GPT-2-hparams] [computed]) + the pooler dense on the
      // [CLS] token (d² MACs).
      const double body = s == 128 ? 39'460'012'032.0 : 167'503'724'544.0;
      CHECK(body == body_macs(24, static_cast<double>(s), 1024));
      const double expected = body + 1024.0 * 1024.0;
      MESSAGE(
          fmt::format("BERT-large S={}: forward MACs expected {:.0f} (body {:.0f} + pooler) "
                      "actual {:.0f}",
                      s, expected, body, step.totals().forward_macs));
      CHECK(step.seq_len() == s);
      CHECK(step.totals().forward_macs == expected);
    }
  }

  TEST_CASE("GPT-2 forward matmul MACs per sequence equal body plus LM head") {
    struct Row {
      const char* name;
      double layers, d, body, head;
    };
    const Row rows[] = {
        // [GPT-2-hparams], S = 1024
        {"gpt2_small", 12, 768, 106'300'440'576.0, 39'523'713'024.0},
        {"gpt2_medium", 24, 1024, 360'777'252'864.0, 52'698'284'032.0},
        {"gpt2_large", 36, 1280, 821'412'495'360.0, 65'872'855'040.0},
        {"gpt2_xl", 48, 1600, 1'671'010'713'600.0, 82'341'068'800.0},
    };
    for (const Row& r : rows) {
      const TrainingStep step = build_training_step(zoo_model(r.name), {});
      CHECK(r.body == body_macs(r.layers, 1024, r.d));
      MESSAGE(
          fmt::format("{}: forward MACs expected {:.0f} actual {:.0f}; training MACs "
                      "expected 3x = {:.0f} actual {:.0f}",
                      r.name, r.body + r.head, step.totals().forward_macs, 3 * (r.body + r.head),
                      step.totals().forward_macs + step.totals().backward_macs));
      CHECK(step.seq_len() == 1024);
      CHECK(step.totals().forward_macs == r.body + r.head);
      // Every GEMM's input needs a gradient, so backward = 2 × forward exactly.
      CHECK(step.totals().backward_macs == 2.0 * step.totals().forward_macs);
    }
  }

  TEST_CASE("attention is QK and AV batched GEMMs with two input gradients each") {
    StepOptions o = seq(128);
    o.batch = 4;
    const TrainingStep s = build_training_step(zoo_model("bert_large"), o);
    const std::string p = "encoder.layer.3.attention.self";
    std::map<std::string, const Op*> ops;
    for (const Op& op : s.ops()) {
      if (op.name.starts_with(p + ".")) ops[op.name.substr(p.size() + 1)] = &op;
    }
    const Op& qk = *ops.at("qk");
    CHECK(qk.op_class == OpClass::kGemm);
    CHECK(qk.gemm.m == 128);
    CHECK(qk.gemm.n == 128);
    CHECK(qk.gemm.k == 64);          // head width 1024 / 16
    CHECK(qk.gemm.batch == 4 * 16);  // batch × heads
    CHECK(ops.at("av")->gemm.k == 128);
    CHECK(ops.at("softmax")->op_class == OpClass::kSoftmax);
    CHECK(ops.at("softmax")->elements == 4 * 16 * 128 * 128);
    CHECK(ops.count("dropout") == 1);
    const double fwd = qk.flops + ops.at("av")->flops;
    const double bwd = ops.at("qk.dgrad_q")->flops + ops.at("qk.dgrad_k")->flops +
                       ops.at("av.dgrad_p")->flops + ops.at("av.dgrad_v")->flops;
    MESSAGE(
        fmt::format("attention S×S products: forward {:.0f} FLOP, backward {:.0f} FLOP", fwd, bwd));
    CHECK(bwd == 2.0 * fwd);
  }

  TEST_CASE("GPT-2 ties the LM head to the token embedding") {
    const TrainingStep s = build_training_step(zoo_model("gpt2_small"), {});
    const auto& g = s.gradients();
    CHECK(g.size() == 148);  // wte, wpe, 12 per block × 12, ln_f weight and bias
    CHECK(g.front().name == "ln_f.weight");
    const GradientTensor& wte = g.back().name == "wte.weight" ? g.back() : g[g.size() - 2];
    CHECK(wte.name == "wte.weight");
    CHECK(wte.params == 50'257 * 768);
    // The table's gradient is complete only after the LM head's weight gradient is added.
    OpId head = 0;
    for (OpId i = 0; i < s.ops().size(); ++i) {
      if (s.ops()[i].name == "lm_head.wgrad") head = i;
    }
    const auto& preds = s.predecessors(wte.ready_after);
    CHECK(std::find(preds.begin(), preds.end(), head) != preds.end());
    for (const auto& t : g) CHECK(t.name != "lm_head.weight");
  }

  TEST_CASE("BERT sequence length beyond the position table is a config error") {
    CHECK_THROWS_WITH_AS(build_training_step(zoo_model("bert_large"), seq(1024)),
                         "zoo: error: layer 'embeddings.position_embeddings': sequence length "
                         "1024 exceeds the 512 position rows",
                         scalecast::common::ConfigError);
  }

  TEST_CASE("BERT pre-training heads add MLM and NSP losses") {
    const TrainingStep s = build_training_step(zoo_model("bert_large_pretrain"), seq(128));
    int losses = 0;
    for (const Op& op : s.ops()) losses += op.pass == Pass::kLoss ? 1 : 0;
    CHECK(losses == 2);
    CHECK(s.totals().params == 336'226'108);
    // MLM decoder over every token: S·d·V MACs on top of the encoder, pooler, transform, NSP.
    const double expected =
        39'460'012'032.0 + 1024.0 * 1024 + 128.0 * 1024 * 1024 + 128.0 * 1024 * 30522 + 1024.0 * 2;
    MESSAGE(fmt::format("forward MACs expected {:.0f} actual {:.0f}", expected,
                        s.totals().forward_macs));
    CHECK(s.totals().forward_macs == expected);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("fused attention: one kernel per pass, the probabilities written once and read back") {
    // BERT-large, batch 2 at 128 tokens, fp16: per attention layer b = 2 x 16 heads, dh = 64;
    // one S x S product is 2 s^2 dh b FLOPs [computed]. Fused: the forward two products, the
    // backward four (dV, dP, dQ, dK from the stored probabilities); Q, K, V in and the context
    // out, plus the probabilities written once forward and read once backward.
    StepOptions o = seq(128);
    o.batch = 2;
    o.precision = scalecast::common::Precision::kFp16Mixed;
    const Model m = zoo_model("bert_large");
    const TrainingStep unfused = build_training_step(m, o);
    o.fused_attention = true;
    const TrainingStep fused = build_training_step(m, o);
    const double s = 128, dh = 64, b = 32, d = 1024, n = 2, ab = 2;
    const double product = 2 * s * s * dh * b, seq_el = n * s * d, scores = b * s * s;
    int fwd = 0, bwd = 0;
    for (const Op& op : fused.ops()) {
      CHECK(op.name.find(".softmax") == std::string::npos);
      if (op.name == "encoder.layer.0.attention.self.fused") {
        ++fwd;
        CHECK(op.op_class == OpClass::kAttention);
        CHECK(op.tensor_core);
        CHECK(op.flops == doctest::Approx(2 * product));
        CHECK(op.bytes_read == doctest::Approx(3 * seq_el * ab));
        CHECK(op.bytes_written == doctest::Approx((seq_el + scores) * ab));
      }
      if (op.name == "encoder.layer.0.attention.self.fused.bwd") {
        ++bwd;
        CHECK(op.flops == doctest::Approx(4 * product));
        CHECK(op.bytes_read == doctest::Approx((4 * seq_el + scores) * ab));
        CHECK(op.bytes_written == doctest::Approx(3 * seq_el * ab));
      }
    }
    CHECK(fwd == 1);
    CHECK(bwd == 1);
    // Per layer the unfused path has 4 forward and 6 backward ops for the same products
    // (Q·Kᵀ, softmax, dropout, P·V; two gradients per product, dropout and softmax backward).
    CHECK(unfused.ops().size() - fused.ops().size() == 24u * (4 - 1 + 6 - 1));
    // Same parameters and gradients either way.
    CHECK(fused.totals().params == unfused.totals().params);
  }
}
