// The scenario key seq_len: parsed only for token-sequence models, with precise errors; from the
// file or --set into the training step (every sequence-dependent shape: linear parts x4 and the
// S x S attention parts x16 from 128 to 512 tokens, [BERT-config], [GPT-2-hparams] [computed]) and
// into summary.json.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/config_error.hpp"
#include "models/zoo.hpp"
#include "sim/outputs.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_runner.hpp"

using namespace scalecast::sim;
using scalecast::common::ConfigError;
namespace models = scalecast::models;

namespace {

std::string bert(const std::string& seq_line) {
  return "platform: dgx1-v100\nmodel: bert_large\n" + seq_line +
         "precision: fp16\nbatch_per_gpu: 2\nnodes: 1\n";
}

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    load_scenario_text(text, "bad.yaml", parse_overrides(sets));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("scenario seq_len overrides the model default from the file and from --set") {
    const Scenario given = load_scenario_text(bert("seq_len: 512\n"), "s.yaml");
    CHECK(given.seq_len == 512);
    CHECK(effective_seq_len(given) == 512);
    CHECK(given.resolved_yaml.find("seq_len: 512") != std::string::npos);

    const Scenario plain = load_scenario_text(bert(""), "s.yaml");
    CHECK(plain.seq_len == 0);
    CHECK(effective_seq_len(plain) == 128);  // bert_large's default (pre-training phase 1)

    const Scenario set = load_scenario_text(bert(""), "s.yaml", parse_overrides({"seq_len=512"}));
    CHECK(set.seq_len == 512);
    CHECK(set.resolved_yaml.find("seq_len: 512") != std::string::npos);
    const Scenario reset =
        load_scenario_text(bert("seq_len: 512\n"), "s.yaml", parse_overrides({"seq_len=384"}));
    CHECK(reset.seq_len == 384);

    const Scenario gpt = load_scenario_text(
        "platform: dgx1-v100\nmodel: gpt2_small\nseq_len: 256\nnodes: 1\n", "g.yaml");
    CHECK(effective_seq_len(gpt) == 256);
    const Scenario cnn =
        load_scenario_text("platform: dgx1-v100\nmodel: resnet50\nnodes: 1\n", "c.yaml");
    CHECK(effective_seq_len(cnn) == 0);
  }

  TEST_CASE("scenario seq_len errors name the file line and key") {
    const std::string cnn =
        error_of("platform: dgx1-v100\nmodel: resnet50\nseq_len: 512\nnodes: 1\n");
    CHECK(cnn ==
          "bad.yaml:3:10: error: seq_len: expected only for a model whose input is token "
          "sequences; resnet50 takes images");
    const std::string zero = error_of(bert("seq_len: 0\n"));
    CHECK(
        zero ==
        "bad.yaml:3:10: error: seq_len: expected at least 1 (a whole number from 1 to 1,000,000), "
        "got 0");
    const std::string negative = error_of(bert("seq_len: -128\n"));
    CHECK(
        negative ==
        "bad.yaml:3:10: error: seq_len: expected at least 1 (a whole number from 1 to 1,000,000), "
        "got -128");
    const std::string fraction = error_of(bert("seq_len: 12.5\n"));
    CHECK(
        fraction ==
        "bad.yaml:3:10: error: seq_len: expected a whole number from 1 to 1,000,000, got \"12.5\"");
    const std::string text = error_of(bert("seq_len: long\n"));
    CHECK(
        text ==
        "bad.yaml:3:10: error: seq_len: expected a whole number from 1 to 1,000,000, got \"long\"");
    const std::string too_long = error_of(bert("seq_len: 1024\n"));
    INFO(too_long);
    CHECK(
        too_long.starts_with("bad.yaml:3:10: error: seq_len: bert_large cannot take sequence "
                             "length 1024: "));
    CHECK(too_long.find("exceeds the 512 position rows") != std::string::npos);
    const std::string set_cnn =
        error_of("platform: dgx1-v100\nmodel: resnet50\nnodes: 1\n", {"seq_len=128"});
    INFO(set_cnn);
    CHECK(set_cnn.find("seq_len: expected only for a model whose input is token sequences") !=
          std::string::npos);
    const std::string set_zero = error_of(bert(""), {"seq_len=0"});
    CHECK(set_zero ==
          "--set seq_len=0: error: seq_len: expected at least 1 (a whole number from 1 "
          "to 1,000,000), got 0");
  }

  TEST_CASE("scenario seq_len 512 scales BERT-large step FLOPs by 4 and attention by 16") {
    const models::Model model = models::load_model("bert_large");
    const auto step = [&](const char* seq) {
      return scenario_step(load_scenario_text(bert(seq), "s.yaml"), model);
    };
    const models::TrainingStep s128 = step("seq_len: 128\n");
    const models::TrainingStep s256 = step("seq_len: 256\n");
    const models::TrainingStep s512 = step("seq_len: 512\n");
    CHECK(s128.seq_len() == 128);
    CHECK(s512.seq_len() == 512);
    // [BERT-config] [computed]: exact body MACs per sequence 167,503,724,544 at S 512, plus the
    // pooler's d² on the [CLS] token; batch 2.
    const double expected_macs = 2.0 * (167'503'724'544.0 + 1024.0 * 1024.0);
    MESSAGE(fmt::format("forward MACs at 512, batch 2: expected {:.0f} actual {:.0f}",
                        expected_macs, s512.totals().forward_macs));
    CHECK(s512.totals().forward_macs == expected_macs);

    // Per op: the S x S attention parts (QKᵀ, softmax, attention dropout, P·V and their
    // backward) grow with S²; the pooler on the [CLS] token, its loss and the optimizer do not
    // depend on S; every other op (embeddings, Q/K/V/O and FFN GEMMs, LayerNorm, GELU,
    // dropout, adds, and the scatter of the [CLS] gradient into the sequence) grows with S.
    // FLOPs are proportional. Bytes of an S-linear op may hold a constant part (LayerNorm's γ/β
    // gradients): b(512) - b(256) = 2 (b(256) - b(128)). Bytes of an attention op are
    // α·S² (scores, probabilities) + β·S (Q, K, V, context rows), no constant: α and β from 128
    // and 256 must give b(512) exactly, with α > 0.
    REQUIRE(s128.ops().size() == s512.ops().size());
    REQUIRE(s256.ops().size() == s512.ops().size());
    double linear128 = 0, linear512 = 0, scores128 = 0, scores512 = 0;
    int flops_checked = 0, bytes_checked = 0;
    for (std::size_t i = 0; i < s128.ops().size(); ++i) {
      const models::Op& a = s128.ops()[i];
      const models::Op& m = s256.ops()[i];
      const models::Op& b = s512.ops()[i];
      REQUIRE(a.name == b.name);
      int power = 1;  // of S
      if (a.pass == models::Pass::kOptimizer || a.layer < 0) {
        power = 0;
      } else {
        const models::Layer& l = model.layers[static_cast<std::size_t>(a.layer)];
        if (l.kind == models::LayerKind::kAttention) power = 2;
        if (l.name.starts_with("pooler.") && l.kind != models::LayerKind::kSelectToken) power = 0;
      }
      const double ratio = power == 2 ? 16.0 : power == 1 ? 4.0 : 1.0;
      if (a.op_class == models::OpClass::kGemm) {
        (power == 2 ? scores128 : linear128) += a.flops;
        (power == 2 ? scores512 : linear512) += b.flops;
      }
      if (a.flops > 0.0) {
        INFO(a.name << " flops: 128 " << a.flops << ", 512 " << b.flops << ", ratio expected "
                    << ratio);
        CHECK(b.flops == doctest::Approx(ratio * a.flops));
        ++flops_checked;
      }
      const double ba = a.bytes_read + a.bytes_written, bm = m.bytes_read + m.bytes_written,
                   bb = b.bytes_read + b.bytes_written;
      INFO(a.name << " bytes at 128 256 512: " << ba << " " << bm << " " << bb << "; power of S "
                  << power);
      if (power == 0) {
        CHECK(bb == doctest::Approx(ba));
      } else if (power == 1) {
        CHECK(bb - bm == doctest::Approx(2.0 * (bm - ba)));
        CHECK(bb > bm);
      } else {
        const double alpha = (bm / 256.0 - ba / 128.0) / 128.0;
        const double beta = ba / 128.0 - 128.0 * alpha;
        CHECK(alpha > 0.0);
        CHECK(bb == doctest::Approx(alpha * 512.0 * 512.0 + beta * 512.0));
      }
      ++bytes_checked;
    }
    CHECK(flops_checked > 500);
    CHECK(bytes_checked > 700);
    MESSAGE(
        fmt::format("{} ops; linear GEMM FLOPs 128 -> 512: x{:.4f} (expected 4); attention "
                    "score and context GEMM FLOPs: x{:.4f} (expected 16)",
                    s512.ops().size(), linear512 / linear128, scores512 / scores128));
    CHECK(linear512 / linear128 == doctest::Approx(4.0).epsilon(1e-3));
    CHECK(scores512 / scores128 == doctest::Approx(16.0));
  }

  TEST_CASE("scenario attention: fused or unfused, only where the model has attention") {
    CHECK(!load_scenario_text(bert(""), "s.yaml").fused_attention);
    CHECK(load_scenario_text(bert("attention: fused\n"), "s.yaml").fused_attention);
    CHECK(!load_scenario_text(bert("attention: unfused\n"), "s.yaml").fused_attention);
    CHECK(load_scenario_text(bert(""), "s.yaml", parse_overrides({"attention=fused"}))
              .fused_attention);
    CHECK(error_of(bert("attention: flash\n")) ==
          "bad.yaml:3:12: error: attention: expected fused or unfused, got \"flash\"");
    CHECK(error_of(bert("attention: [fused]\n")).find("bad.yaml:3:12: error: attention:") !=
          std::string::npos);
    CHECK(error_of("platform: dgx1-v100\nmodel: resnet50\nattention: fused\nnodes: 1\n") ==
          "bad.yaml:3:12: error: attention: expected only for a model with attention layers; "
          "resnet50 has none");
    // The fused step prices one kernel per pass: BERT-large at 512 tokens moves less through
    // memory and takes less time on the GPU (the S x S passes of softmax and dropout are gone).
    const Scenario plain = load_scenario_text(bert("seq_len: 512\n"), "s.yaml");
    const Scenario fused = load_scenario_text(bert("seq_len: 512\nattention: fused\n"), "s.yaml");
    const models::Model m = models::zoo_model("bert_large");
    double plain_bytes = 0, fused_bytes = 0;
    const models::TrainingStep plain_step = scenario_step(plain, m);
    const models::TrainingStep fused_step = scenario_step(fused, m);
    for (const auto& op : plain_step.ops()) plain_bytes += op.bytes_read + op.bytes_written;
    for (const auto& op : fused_step.ops()) fused_bytes += op.bytes_read + op.bytes_written;
    CHECK(fused_bytes < plain_bytes);
  }

  TEST_CASE("summary.json carries the sequence length next to the model") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("scalecast-seq-len-" + std::to_string(::getpid()));
    const auto summary = [&](const Scenario& s) {
      write_summary(dir.string(), s, {nlohmann::ordered_json::object()});
      std::ifstream in(dir / "summary.json");
      std::stringstream text;
      text << in.rdbuf();
      return nlohmann::ordered_json::parse(text.str());
    };
    const nlohmann::ordered_json given =
        summary(load_scenario_text(bert(""), "s.yaml", parse_overrides({"seq_len=512"})));
    CHECK(given["seq_len"] == 512);
    std::vector<std::string> keys;
    for (const auto& [k, v] : given.items()) keys.push_back(k);
    const auto model_at = std::find(keys.begin(), keys.end(), "model");
    REQUIRE(model_at != keys.end());
    CHECK(*(model_at + 1) == "seq_len");
    CHECK(summary(load_scenario_text(bert(""), "s.yaml"))["seq_len"] == 128);
    CHECK_FALSE(summary(load_scenario_text(bert(""), "s.yaml")).contains("attention"));
    CHECK(summary(load_scenario_text(bert("attention: fused\n"), "s.yaml"))["attention"] ==
          "fused");
    CHECK_FALSE(
        summary(load_scenario_text("platform: dgx1-v100\nmodel: resnet50\nnodes: 1\n", "c.yaml"))
            .contains("seq_len"));
    std::filesystem::remove_all(dir);
  }
}
