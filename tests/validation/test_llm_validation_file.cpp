// Parallel (LLM) points of the validation format (validation/FORMAT.md section 9): the keys, their
// errors at file:line:col, and validation/llm-public.yaml, whose every point's `parallel` map must
// pass parse_parallel() for its model, on a platform the repository ships.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>
#include <set>
#include <string>

#include "common/config_error.hpp"
#include "models/parallel_config.hpp"
#include "platforms/platform.hpp"
#include "validation/validation_file.hpp"

using scalecast::common::ConfigError;
using namespace scalecast::validation;

namespace {

// One anchor and one predict point; tests replace one line to break it.
const std::string kGood =
    "schema: scalecast-validation/1\n"                                          // 1
    "points:\n"                                                                 // 2
    "  - id: A\n"                                                               // 3
    "    system: dgx-h100\n"                                                    // 4
    "    model: llama3_70b\n"                                                   // 5
    "    family: nemo\n"                                                        // 6
    "    seq_len: 8192\n"                                                       // 7
    "    precision: fp8\n"                                                      // 8
    "    framework: nemo\n"                                                     // 9
    "    strategy: parallel\n"                                                  // 10
    "    gpus: 64\n"                                                            // 11
    "    nodes: 8\n"                                                            // 12
    "    parallel: {tp: 4, pp: 4, cp: 2, micro_batch: 1, global_batch: 128}\n"  // 13
    "    measured:\n"                                                           // 14
    "      tokens_per_s_per_gpu: 1533\n"                                        // 15
    "    role: anchor\n"                                                        // 16
    "    source: test\n"                                                        // 17
    "  - id: P\n"                                                               // 18
    "    system: dgx-h100\n"                                                    // 19
    "    model: gpt3_175b\n"                                                    // 20
    "    family: nemo\n"                                                        // 21
    "    seq_len: 2048\n"                                                       // 22
    "    precision: bf16\n"                                                     // 23
    "    framework: nemo\n"                                                     // 24
    "    strategy: parallel\n"                                                  // 25
    "    gpus: 128\n"                                                           // 26
    "    nodes: 16\n"                                                           // 27
    "    parallel: {tp: 4, pp: 8, virtual_stages: 6, schedule: interleaved, global_batch: "
    "256}\n"               // 28
    "    measured:\n"      // 29
    "      mfu: 0.5\n"     // 30
    "    role: predict\n"  // 31
    "    anchor: A\n"      // 32
    "    source: test\n";  // 33

std::string replace_line(const std::string& text, int line, const std::string& replacement) {
  std::string out;
  int n = 1;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    out += (n == line ? replacement : text.substr(start, end - start)) + "\n";
    start = end + 1;
    ++n;
  }
  return out;
}

std::string error_of(const std::string& text) {
  try {
    parse_validation_text(text, "v.yaml");
  } catch (const ConfigError& e) {
    MESSAGE(std::string(e.what()));
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("parallel points load with their parsed configuration") {
    const ValidationFile f = parse_validation_text(kGood, "v.yaml");
    REQUIRE(f.points.size() == 2);
    const ValidationPoint& a = f.points[0];
    CHECK(a.is_parallel());
    CHECK(a.family == "nemo");
    CHECK(a.batch_per_gpu == 0);
    CHECK(a.measured.kind == MeasuredKind::kTokensPerSecondPerGpu);
    CHECK(a.measured.value == 1533);
    REQUIRE(a.parallel.has_value());
    CHECK(a.parallel->dp == 2);  // 64 / (4 x 4 x 2)
    CHECK(a.parallel->seq_len == 8192);
    CHECK(a.parallel->precision == scalecast::models::LlmPrecision::kFp8);
    CHECK(a.anchor_key() == "dgx-h100, family nemo");
    // The anchor key leaves out the model, sequence and precision: one anchor per source family
    // and hardware.
    CHECK(f.points[1].anchor_key() == a.anchor_key());
    CHECK(f.points[1].parallel->precision == scalecast::models::LlmPrecision::kBf16);
    CHECK(f.points[1].measured.kind == MeasuredKind::kMfu);
    CHECK(f.points[1].measured.flops == scalecast::models::FlopConvention::kModel);
    const ValidationFile tt = parse_validation_text(
        replace_line(kGood, 30, "      mfu: 0.5\n      flops: all_params"), "v.yaml");
    CHECK(tt.points[1].measured.flops == scalecast::models::FlopConvention::kAllParams);
    // An unknown model is left for validate to skip: the map is kept, not parsed.
    const ValidationFile u =
        parse_validation_text(replace_line(kGood, 20, "    model: gpt5"), "v.yaml");
    CHECK_FALSE(u.points[1].parallel.has_value());
    CHECK(u.points[1].parallel_node.has_value());
  }

  TEST_CASE("parallel point errors are file:line errors at the key") {
    CHECK(error_of(replace_line(kGood, 13, "    parallel: {tp: 3, global_batch: 128}"))
              .find("v.yaml:13:20: error: points[0].parallel.tp: 3 does not divide the 64 "
                    "attention heads of llama3_70b") == 0);
    CHECK(
        error_of(replace_line(kGood, 13, "    parallel: {tp: 4, pp: 4, dp: 3, global_batch: 128}"))
            .find("points[0].parallel.dp: tp 4 x pp 4 x cp 1 x dp 3 = 48 GPUs, but the job has "
                  "64") != std::string::npos);
    CHECK(
        error_of(replace_line(kGood, 13, "    parallel: {tp: 4, seq_len: 4096, global_batch: 128}"))
            .find("points[0].parallel.seq_len: given by the point's own `seq_len` key") !=
        std::string::npos);
    CHECK(error_of(replace_line(kGood, 10, "    strategy: allreduce"))
              .find("points[0].parallel: strategy \"parallel\" and a `parallel` map go together") !=
          std::string::npos);
    CHECK(error_of(replace_line(kGood, 13, "    batch_per_gpu: 2"))
              .find("points[0].strategy: strategy \"parallel\" and a `parallel` map go together") !=
          std::string::npos);
    CHECK(error_of(replace_line(kGood, 6, "    network: x"))
              .find("points[0]: missing required key 'family'") != std::string::npos);
    CHECK(error_of(replace_line(kGood, 7, "    notes: x")).find("missing required key 'seq_len'") !=
          std::string::npos);
    CHECK(
        error_of(replace_line(kGood, 30, "      mfu: 1.5"))
            .find("v.yaml:30:12: error: points[1].measured.mfu: expected a fraction from 0.001 to "
                  "1, got 1.5") == 0);
    // A denormal mfu printed an error of +inf and a MAPE of inf with exit 0.
    CHECK(error_of(replace_line(kGood, 30, "      mfu: 1e-310"))
              .find("points[1].measured.mfu: expected a fraction from 0.001 to 1, got 1e-310") !=
          std::string::npos);
    CHECK(error_of(replace_line(kGood, 30, "      iteration_s: 1e-9"))
              .find("measured.iteration_s: expected an iteration time in seconds from 1e-06 to "
                    "1e+06, got 1e-9") != std::string::npos);
    CHECK(error_of(replace_line(kGood, 30, "      tflops_per_gpu: 1e300"))
              .find("measured.tflops_per_gpu: expected TFLOP/s per GPU from 0.001 to 100000") !=
          std::string::npos);
    CHECK(error_of(replace_line(kGood, 30, "      mfu: 0.5\n      flops: peak"))
              .find("points[1].measured.flops: expected one of model, causal, all_params") !=
          std::string::npos);
    CHECK(error_of(replace_line(kGood, 15, "      tokens_per_s_per_gpu: 1533\n      flops: model"))
              .find("points[0].measured.flops: only with mfu or hfu") != std::string::npos);
    CHECK(error_of(replace_line(kGood, 30, "      throughput: 100"))
              .find("points[1].measured.throughput: unknown key") != std::string::npos);
    CHECK(error_of(replace_line(kGood, 8, "    precision: fp32"))
              .find("points[0].precision: expected one of bf16, amp_fp16, fp8") !=
          std::string::npos);
    CHECK(
        error_of(replace_line(kGood, 21, "    family: megatron"))
            .find("anchor \"A\" has key (dgx-h100, family nemo), this point has (dgx-h100, family "
                  "megatron)") != std::string::npos);
    CHECK(error_of(replace_line(kGood, 9, "    framework: mxnet"))
              .find("points[0].framework: expected one of megatron, nemo") != std::string::npos);
  }

  TEST_CASE("classic points keep their format, and LLM keys are refused there") {
    const std::string classic =
        "schema: scalecast-validation/1\npoints:\n  - id: A1\n    system: dgx1-v100\n"
        "    model: resnet50\n    precision: fp32\n    framework: tensorflow\n    strategy: none\n"
        "    batch_per_gpu: 128\n    gpus: 1\n    nodes: 1\n    measured:\n      mfu: 0.4\n"
        "    role: anchor\n    source: test\n";
    CHECK(error_of(classic).find("v.yaml:13:12: error: points[0].measured.mfu: an LLM metric: only "
                                 "points with strategy \"parallel\" give it") == 0);
    CHECK(error_of(replace_line(classic, 6, "    precision: fp8"))
              .find("points[0].precision: expected one of fp32, amp_fp16, tf32, unknown") !=
          std::string::npos);
    const ValidationFile pub = load_validation_file("validation/public.yaml");
    CHECK(pub.points.size() > 90);
    for (const ValidationPoint& p : pub.points) CHECK_FALSE(p.is_parallel());
  }
}

TEST_SUITE("validation") {
  TEST_CASE("llm-public.yaml: every point parses, its parallel map passes for its model") {
    const ValidationFile f = load_validation_file("validation/llm-public.yaml");
    MESSAGE(fmt::format("{} points", f.points.size()));
    CHECK(f.points.size() == 45);
    std::map<std::string, int> anchors_per_key;
    std::set<std::string> systems;
    for (const ValidationPoint& p : f.points) {
      INFO(p.id);
      CHECK(p.is_parallel());
      REQUIRE(p.parallel.has_value());  // a zoo transformer, checked by parse_parallel
      CHECK(p.parallel->gpus() == p.gpus);
      CHECK(p.gpus_per_node() == 8);
      if (p.role == Role::kAnchor) {
        ++anchors_per_key[p.anchor_key()];
        CHECK(p.gpus <= 1024);  // anchors only at 1,024 GPUs or fewer
      }
      systems.insert(p.system);
    }
    // At most one anchor per source family and hardware.
    CHECK(anchors_per_key.size() == 7);
    for (const auto& [key, n] : anchors_per_key) CHECK_MESSAGE(n == 1, key);
    // Every platform is one the repository ships (the TorchTitan H100s are their own part).
    for (const std::string& s : systems) {
      INFO(s);
      const auto platform = scalecast::platforms::load_platform(s);
      CHECK(platform.total_nodes() > 0);
    }
    CHECK(f.context_count == 2);
    // TorchTitan's A100 MFU counts 6 x all parameters (tests/models/test_llm_published_flops.cpp).
    for (const ValidationPoint& p : f.points) {
      if (p.family == "torchtitan-a100")
        CHECK(p.measured.flops == scalecast::models::FlopConvention::kAllParams);
    }
  }
}
