// LLM (parallel) points through the validation protocol: the scenario written for a parallel
// configuration, each metric computed from a prediction in the source's definition, and the
// anchor fit in the anchor's own metric.

#include <doctest/doctest.h>

#include <string>

#include "validation/protocol.hpp"
#include "validation/run_predictor.hpp"
#include "validation/validation_file.hpp"

using namespace scalecast::validation;

namespace {

std::string point(const std::string& measured) {
  return "schema: scalecast-validation/1\npoints:\n"
         "  - id: A\n    system: dgx-a100-80gb\n    network: x\n    model: gpt3_175b\n"
         "    family: test\n    seq_len: 2048\n    precision: bf16\n    framework: megatron\n"
         "    strategy: parallel\n    gpus: 64\n    nodes: 8\n"
         "    parallel: {tp: 8, pp: 8, micro_batch: 1, global_batch: 64, recompute: full}\n"
         "    measured:\n      " +
         measured + "\n    role: anchor\n    source: s\n    notes: n\n";
}

// A predictor whose throughput is proportional to the framework efficiency.
class Linear : public Predictor {
 public:
  Prediction predict(const Configuration& c) const override {
    Prediction p;
    p.iteration_time_s = 20.0 / c.framework_efficiency;
    p.tokens_per_s_per_gpu = 64.0 * 2048 / p.iteration_time_s / 64;
    p.mfu = 0.4 * c.framework_efficiency;
    p.hfu = 0.5 * c.framework_efficiency;
    p.peak_flops_per_gpu = 312e12;
    p.throughput_samples_per_s = 64.0 / p.iteration_time_s;
    return p;
  }
};

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("llm validation: a parallel point becomes an LLM scenario with its parallel map") {
    const ValidationFile f = parse_validation_text(point("iteration_s: 18.13"), "v.yaml");
    const Configuration c = configuration_of(f.points.at(0), ".");
    INFO(c.parallel);
    CHECK(c.parallel.find("tp: 8") != std::string::npos);
    CHECK(c.parallel.find("seq_len: 2048") != std::string::npos);
    CHECK(c.parallel.find("precision: bf16") != std::string::npos);
    const std::string y = scenario_yaml(c, {});
    INFO(y);
    CHECK(y.find("parallel: {") != std::string::npos);
    CHECK(y.find("batch_per_gpu") == std::string::npos);
    CHECK(y.find("nodes: 8") != std::string::npos);
  }

  TEST_CASE("llm validation: metrics in each source's definition, anchors fitted in them") {
    // Narayanan et al. Eq. 3 for GPT-3 175B (l 96, h 12288, V 51200), B 64, s 2048, 20 s on 64
    // GPUs: 96 B s l h^2 (1 + s/6h + V/16lh) / (20 x 64) / 1e12 TFLOP/s per GPU.
    const ValidationFile f = parse_validation_text(point("tflops_per_gpu: 150"), "v.yaml");
    Prediction p;
    p.iteration_time_s = 20.0;
    const double b = 64, s = 2048, l = 96, h = 12288, v = 51200;
    const double expected =
        96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h)) / (20.0 * 64) / 1e12;
    CHECK(metric_of(f.points.at(0), p) == doctest::Approx(expected).epsilon(1e-12));

    // Iteration time: the fit scales speed, so the fitted time equals the measured one.
    const ValidationFile it = parse_validation_text(point("iteration_s: 18.13"), "v.yaml");
    const AnchorFit fit = fit_anchor(it.points.at(0), ".", Linear(), {});
    REQUIRE(fit.fitted);
    CHECK(fit.simulated == doctest::Approx(18.13).epsilon(1e-4));
    CHECK(fit.efficiency == doctest::Approx(20.0 / 18.13).epsilon(1e-4));
    // MFU in the model convention is the simulator's own.
    const ValidationFile mfu = parse_validation_text(point("mfu: 0.5"), "v.yaml");
    const AnchorFit fm = fit_anchor(mfu.points.at(0), ".", Linear(), {});
    CHECK(fm.efficiency == doctest::Approx(1.25).epsilon(1e-4));
  }
}
