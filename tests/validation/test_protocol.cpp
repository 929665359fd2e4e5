#include <doctest/doctest.h>

#include <mutex>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "validation/protocol.hpp"
#include "validation/report.hpp"
#include "validation/run_predictor.hpp"
#include "validation/statistics.hpp"

using namespace scalecast::validation;

namespace {

// A fake simulator with a known closed form: per-GPU compute time batch / (rate * efficiency)
// plus a communication time that grows with nodes and does not depend on the efficiency.
class FakePredictor : public Predictor {
 public:
  mutable std::vector<Configuration> seen;
  mutable std::mutex seen_mutex;  // run_protocol calls predict() from several threads
  double rate_per_gpu = 500.0;    // samples/s at efficiency 1
  double comm_s_per_node = 0.01;  // per extra node
  double fixed_s = 0.0;           // host time per step that the efficiency does not divide

  Prediction predict(const Configuration& c) const override {
    {
      std::lock_guard lock(seen_mutex);
      seen.push_back(c);
    }
    if (c.system == "nowhere") throw Unsupported("no platform named \"nowhere\"");
    if (c.model == "unknown_net") throw Unsupported("unknown model \"unknown_net\"");
    if (c.system == "crashy" && c.gpus > 8)
      throw std::runtime_error("scalecast run exited 4: engine: out of range");
    Prediction p;
    const double compute_s = c.batch_per_gpu / (rate_per_gpu * c.framework_efficiency);
    const double comm_s = comm_s_per_node * (c.nodes - 1);
    p.iteration_time_s = fixed_s + compute_s + comm_s;
    p.throughput_samples_per_s = c.gpus * c.batch_per_gpu / p.iteration_time_s;
    p.breakdown.compute_s = compute_s;
    p.breakdown.exposed_comm_s = comm_s;
    if (c.system == "calibrated") p.measured_kernel_share = 0.625;
    return p;
  }
};

std::string point(const std::string& id, const std::string& system, int gpus, int nodes,
                  const std::string& measured, const std::string& role_and_anchor,
                  const std::string& model = "resnet50") {
  return "  - id: " + id + "\n    system: " + system + "\n    model: " + model +
         "\n    precision: fp32\n    framework: mxnet\n    strategy: " +
         (gpus == 1 ? "none" : "allreduce") +
         "\n    batch_per_gpu: 100\n    gpus: " + std::to_string(gpus) +
         "\n    nodes: " + std::to_string(nodes) + "\n    measured:\n      " + measured + "\n" +
         role_and_anchor + "    source: test\n";
}

std::string file_text(double p2_measured = 3000.0) {
  return "schema: scalecast-validation/1\npoints:\n" +
         point("A1", "sysA", 1, 1, "throughput: 400", "    role: anchor\n") +
         point("P1", "sysA", 8, 1, "throughput: 3000", "    role: predict\n    anchor: A1\n") +
         point("P2", "sysA", 16, 2, "throughput: " + std::to_string(p2_measured),
               "    role: predict\n    anchor: A1\n") +
         point("P3", "sysA", 32, 4, "scaling_efficiency: 0.8",
               "    role: predict\n    anchor: A1\n") +
         point("P4", "sysA", 32, 4, "scaling_efficiency: 0.9\n      baseline_gpus: 8",
               "    role: predict\n    anchor: A1\n") +
         point("A2", "sysB", 16, 2, "throughput: 5000", "    role: anchor\n") +
         point("P5", "sysB", 64, 8, "throughput: 15000", "    role: predict\n    anchor: A2\n") +
         point("A3", "nowhere", 1, 1, "throughput: 100", "    role: anchor\n") +
         point("P6", "nowhere", 8, 1, "throughput: 700", "    role: predict\n    anchor: A3\n") +
         point("A4", "sysA", 1, 1, "throughput: 100", "    role: anchor\n", "unknown_net") +
         point("P7", "sysA", 8, 1, "throughput: 700", "    role: predict\n    anchor: A4\n",
               "unknown_net");
}

const PointResult& result(const ValidationRun& run, const std::string& id) {
  for (const PointResult& r : run.points) {
    if (r.point->id == id) return r;
  }
  FAIL("no result for " << id);
  throw 0;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("single-GPU anchor fit is exact in one step") {
    const ValidationFile f = parse_validation_text(file_text(), "dir/v.yaml");
    FakePredictor fake;
    const AnchorFit fit = fit_anchor(f.points[0], "dir", fake, {});
    // 1 GPU, no communication: throughput = 500 * e, measured 400 -> e = 0.8.
    CHECK(fit.fitted);
    CHECK(fit.efficiency == doctest::Approx(0.8));
    CHECK(fit.simulations == 2);
    CHECK(std::abs(fit.residual_pct) < 1e-9);
  }

  TEST_CASE("multi-node anchor fit includes communication and converges") {
    const ValidationFile f = parse_validation_text(file_text(), "dir/v.yaml");
    FakePredictor fake;
    const AnchorFit fit = fit_anchor(*f.find("A2"), "dir", fake, {});
    // 16 GPUs x 100 / (100 / (500 e) + 0.01) = 5000, solved for e:
    const double expected_e = 100.0 / (500.0 * (16.0 * 100.0 / 5000.0 - 0.01));
    MESSAGE("expected efficiency " << expected_e << ", fitted " << fit.efficiency);
    CHECK(fit.fitted);
    CHECK(fit.efficiency == doctest::Approx(expected_e).epsilon(1e-4));
    CHECK(std::abs(fit.residual_pct) <= 0.01);
  }

  TEST_CASE("a fixed per-step cost is not absorbed by the fitted efficiency") {
    // Anchor: 1 GPU, batch 100, 400 samples/s measured = a 0.25 s step, of which 0.05 s is fixed
    // host time: e = 100 / (500 x 0.20) = 1. Predict: the same GPU at batch 25 keeps the whole
    // 0.05 s (25 / 500 + 0.05 = 0.1 s, 250 samples/s); an efficiency fitted to the whole step
    // would have scaled it with the batch (400 samples/s).
    std::string text =
        "schema: scalecast-validation/1\npoints:\n" +
        point("A1", "sysA", 1, 1, "throughput: 400", "    role: anchor\n") +
        point("S1", "sysA", 1, 1, "throughput: 250", "    role: predict\n    anchor: A1\n");
    const std::string b100 =
        "batch_per_gpu: 100\n    gpus: 1\n    nodes: 1\n    measured:\n"
        "      throughput: 250";
    const std::size_t at = text.find(b100);
    REQUIRE(at != std::string::npos);
    text.replace(at, std::string("batch_per_gpu: 100").size(), "batch_per_gpu: 25");
    const ValidationFile f = parse_validation_text(text, "dir/v.yaml");
    FakePredictor fake;
    fake.fixed_s = 0.05;
    const ValidationRun run = run_protocol(f, fake);
    REQUIRE(run.anchors.size() == 1);
    CHECK(run.anchors[0].fitted);
    CHECK(run.anchors[0].efficiency == doctest::Approx(1.0).epsilon(1e-4));
    const PointResult& s1 = result(run, "S1");
    REQUIRE(s1.simulated);
    CHECK(s1.predicted == doctest::Approx(250.0).epsilon(1e-4));
  }

  TEST_CASE("an anchor faster than its fixed costs alone is not fitted, and its points skip") {
    // 0.3 s of fixed host time per step against a measured 0.25 s step (400 samples/s): no
    // efficiency reaches it. The fit used to end after its simulations with the last trial
    // efficiency and a -16% residual, and its points were predicted from it.
    const ValidationFile f = parse_validation_text(file_text(), "dir/v.yaml");
    FakePredictor fake;
    fake.fixed_s = 0.3;
    const AnchorFit fit = fit_anchor(f.points[0], "dir", fake, {});
    CHECK_FALSE(fit.fitted);
    CHECK_FALSE(fit.failed);  // a property of the configuration, not a crash
    CHECK(fit.skip_reason.find("anchor fit did not converge") != std::string::npos);
    CHECK(fit.skip_reason.find("fixed per-step host time") != std::string::npos);
    const ValidationRun run = run_protocol(f, fake);
    const PointResult& p1 = result(run, "P1");
    CHECK_FALSE(p1.simulated);
    CHECK(p1.skip_reason.find("anchor A1 not simulated: anchor fit did not converge") == 0);
  }

  TEST_CASE("predictions use the named anchor's efficiency and signed errors") {
    const ValidationFile f = parse_validation_text(file_text(), "dir/v.yaml");
    FakePredictor fake;
    const ValidationRun run = run_protocol(f, fake);
    const PointResult& p1 = result(run, "P1");
    // e = 0.8: 8 GPUs x 400 = 3200 predicted, measured 3000 -> +6.667 %.
    CHECK(p1.simulated);
    CHECK(p1.predicted == doctest::Approx(3200.0));
    CHECK(p1.error_pct == doctest::Approx(100.0 * 200.0 / 3000.0));
    const PointResult& p2 = result(run, "P2");
    const double t2 = 16 * 100.0 / (100.0 / 400.0 + 0.01);
    CHECK(p2.predicted == doctest::Approx(t2));
    for (const Configuration& c : fake.seen) CHECK(c.base_dir == "dir");
  }

  TEST_CASE("scaling efficiency against the anchor or a stated baseline") {
    const ValidationFile f = parse_validation_text(file_text(), "v.yaml");
    FakePredictor fake;
    const ValidationRun run = run_protocol(f, fake);
    // P3: baseline = anchor (1 GPU, 400/s); 4 nodes: per-GPU 100 / (0.25 + 0.03).
    const double per_gpu_p = 100.0 / (0.25 + 0.03);
    CHECK(result(run, "P3").predicted == doctest::Approx(per_gpu_p / 400.0));
    // P4: baseline 8 GPUs = 1 node of P's layout, no communication: per-GPU 400.
    CHECK(result(run, "P4").predicted == doctest::Approx(per_gpu_p / 400.0));
    bool saw_baseline = false;
    for (const Configuration& c : fake.seen) {
      saw_baseline = saw_baseline || (c.gpus == 8 && c.nodes == 1 && c.system == "sysA" &&
                                      c.strategy == Strategy::kAllreduce);
    }
    CHECK(saw_baseline);
    CHECK(result(run, "P4").error_pct == doctest::Approx((per_gpu_p / 400.0 - 0.9) / 0.9 * 100.0));
  }

  TEST_CASE("unsimulatable points are skipped with their reason and counted") {
    const ValidationFile f = parse_validation_text(file_text(), "v.yaml");
    FakePredictor fake;
    const ValidationRun run = run_protocol(f, fake);
    CHECK_FALSE(result(run, "P6").simulated);
    CHECK(result(run, "P6").skip_reason ==
          "anchor A3 not simulated: no platform named \"nowhere\"");
    CHECK(result(run, "P7").skip_reason ==
          "anchor A4 not simulated: unknown model \"unknown_net\"");
    const RunSummary s = summarize(run);
    CHECK(s.overall.count == 5);
    CHECK(s.overall.skipped == 2);
    CHECK(s.per_system.at("nowhere").count == 0);
    CHECK(s.per_system.at("nowhere").skipped == 1);
    const std::string table = format_table(f, run, s);
    CHECK(table.find("P6                   nowhere              anchor A3 not simulated") !=
          std::string::npos);
  }

  TEST_CASE("a point with no platform or model of its name is skipped at its key, the rest run") {
    // FORMAT.md 5.4: such a point is listed as skipped with its reason. validate aborted the
    // whole file at the first one (exit 1 at its `system`, nothing simulated).
    const std::string text =
        "schema: scalecast-validation/1\npoints:\n" +
        point("A1", "dgx1-v100", 1, 1, "throughput: 400", "    role: anchor\n") +
        point("P1", "dgx1-v100", 8, 1, "throughput: 3000", "    role: predict\n    anchor: A1\n") +
        point("A2", "nosuch-cluster", 1, 1, "throughput: 400", "    role: anchor\n") +
        point("P2", "nosuch-cluster", 8, 1, "throughput: 3000",
              "    role: predict\n    anchor: A2\n") +
        point("A3", "dgx1-v100", 1, 1, "throughput: 400", "    role: anchor\n", "no_such_net") +
        point("P3", "dgx1-v100", 8, 1, "throughput: 3000", "    role: predict\n    anchor: A3\n",
              "no_such_net");
    ValidationFile f = parse_validation_text(text, "v.yaml");
    mark_unsimulatable(f);
    CHECK(f.points[0].unsimulatable.empty());
    CHECK(f.points[1].unsimulatable.empty());
    INFO(f.points[3].unsimulatable);
    CHECK(f.points[2].unsimulatable.rfind(
              "v.yaml:31:13: points[2].system: no platform named 'nosuch-cluster'", 0) == 0);
    CHECK(f.points[3].unsimulatable.rfind(
              "v.yaml:44:13: points[3].system: no platform named 'nosuch-cluster'", 0) == 0);
    CHECK(f.points[5].unsimulatable.rfind(
              "v.yaml:72:12: points[5].model: unknown model 'no_such_net' (zoo: resnet50, ", 0) ==
          0);
    FakePredictor fake;
    const ValidationRun run = run_protocol(f, fake);
    CHECK(result(run, "P1").simulated);
    CHECK(result(run, "P2").skip_reason == f.points[3].unsimulatable);  // its own key
    CHECK(result(run, "P3").skip_reason == f.points[5].unsimulatable);
    CHECK_FALSE(result(run, "P2").failed);
    CHECK(run.anchors[1].skip_reason == f.points[2].unsimulatable);
    CHECK(run.failures() == 0);
    for (const Configuration& c : fake.seen) {  // nothing simulated for the skipped points
      CHECK(c.system == "dgx1-v100");
      CHECK(c.model == "resnet50");
    }
    const RunSummary s = summarize(run);
    CHECK(s.overall.count == 1);
    CHECK(s.overall.skipped == 2);
    const auto j = nlohmann::json::parse(format_json(f, run, s));
    REQUIRE(j["skipped"].size() == 2);
    CHECK(j["skipped"][0]["reason"].get<std::string>().rfind("v.yaml:44:13: points[3].system", 0) ==
          0);
  }

  TEST_CASE("a seq_len the point's model cannot take is a skip at the point's seq_len key") {
    // The reason had no file:line: "anchor A not simulated: seq_len 128 is given but resnet50
    // takes images, not token sequences".
    auto with_seq = [](std::string p, int seq_len) {
      const std::string model_line = "\n    precision:";
      p.insert(p.find(model_line), "\n    seq_len: " + std::to_string(seq_len));
      return p;
    };
    const std::string text =
        "schema: scalecast-validation/1\npoints:\n" +
        with_seq(point("A1", "dgx1-v100", 1, 1, "throughput: 400", "    role: anchor\n"), 128) +
        with_seq(point("P1", "dgx1-v100", 8, 1, "throughput: 3000",
                       "    role: predict\n    anchor: A1\n"),
                 128) +
        with_seq(
            point("A2", "dgx1-v100", 1, 1, "throughput: 40", "    role: anchor\n", "bert_large"),
            100000) +
        with_seq(
            point("A3", "dgx1-v100", 1, 1, "throughput: 40", "    role: anchor\n", "bert_large"),
            128);
    ValidationFile f = parse_validation_text(text, "v.yaml");
    mark_unsimulatable(f);
    INFO(f.points[0].unsimulatable);
    CHECK(f.points[0].unsimulatable ==
          "v.yaml:6:14: points[0].seq_len: seq_len 128 is given but resnet50 takes images, not "
          "token sequences");
    CHECK(f.points[1].unsimulatable.rfind("v.yaml:20:14: points[1].seq_len: seq_len 128", 0) == 0);
    INFO(f.points[2].unsimulatable);
    CHECK(f.points[2].unsimulatable.rfind(
              "v.yaml:35:14: points[2].seq_len: bert_large cannot take sequence length 100000",
              0) == 0);
    CHECK(f.points[3].unsimulatable.empty());
    FakePredictor fake;
    const ValidationRun run = run_protocol(f, fake);
    CHECK(run.anchors[0].skip_reason == f.points[0].unsimulatable);
    CHECK(result(run, "P1").skip_reason == f.points[1].unsimulatable);  // its own key
    CHECK(run.failures() == 0);
  }

  TEST_CASE("an anchor the model cannot reach is not fitted, with the reason at its value") {
    // A measured 1e12 samples/s needs an efficiency of 2e9 here (500 samples/s at 1): it was
    // simulated anyway and refused at a line of the scenario validate had written.
    std::string text = file_text();
    const std::size_t at = text.find("throughput: 400");
    REQUIRE(at != std::string::npos);
    text.replace(at, std::string("throughput: 400").size(), "throughput: 1e12");
    const ValidationFile f = parse_validation_text(text, "dir/v.yaml");
    FakePredictor fake;
    const AnchorFit fit = fit_anchor(f.points[0], "dir", fake, {});
    CHECK_FALSE(fit.fitted);
    CHECK_FALSE(fit.failed);
    CHECK(fit.skip_reason ==
          "dir/v.yaml:13:19: points[0].measured.throughput: the measured 1e+12 is not reachable "
          "by the model: matching it needs a framework efficiency of 2e+09 (simulated 500 at "
          "efficiency 1), outside 0.001 to 100, the range of fitted efficiencies");
    CHECK(fake.seen.size() == 1);  // never simulated at the refused efficiency
    const ValidationRun run = run_protocol(f, fake);
    CHECK(result(run, "P1").skip_reason == "anchor A1 not simulated: " + fit.skip_reason);
    // Too slow to reach: an efficiency below the range.
    text.replace(at, std::string("throughput: 1e12").size(), "throughput: 0.01");
    const ValidationFile slow = parse_validation_text(text, "dir/v.yaml");
    CHECK(fit_anchor(slow.points[0], "dir", fake, {})
              .skip_reason.find("needs a framework efficiency of 2e-05") != std::string::npos);
  }

  TEST_CASE("changing a predict point's measured value changes no prediction") {
    FakePredictor fake;
    const ValidationFile a = parse_validation_text(file_text(3000.0), "v.yaml");
    const ValidationFile b = parse_validation_text(file_text(99999.0), "v.yaml");
    const ValidationRun ra = run_protocol(a, fake);
    const ValidationRun rb = run_protocol(b, fake);
    REQUIRE(ra.points.size() == rb.points.size());
    for (std::size_t i = 0; i < ra.points.size(); ++i) {
      CHECK(ra.points[i].predicted == rb.points[i].predicted);
    }
    // ...while the error of the perturbed point does change (the test can fail).
    CHECK(result(ra, "P2").error_pct != result(rb, "P2").error_pct);
  }

  TEST_CASE("parallel runs give the same results in file order") {
    const ValidationFile f = parse_validation_text(file_text(), "v.yaml");
    FakePredictor serial_fake;
    const ValidationRun serial = run_protocol(f, serial_fake);
    // A thread-safe fake: no shared recording.
    class SafeFake : public Predictor {
     public:
      Prediction predict(const Configuration& c) const override {
        FakePredictor local;
        return local.predict(c);
      }
    } safe;
    ProtocolOptions options;
    options.jobs = 3;
    const ValidationRun parallel = run_protocol(f, safe, options);
    REQUIRE(parallel.points.size() == serial.points.size());
    for (std::size_t i = 0; i < serial.points.size(); ++i) {
      CHECK(parallel.points[i].point->id == serial.points[i].point->id);
      CHECK(parallel.points[i].predicted == serial.points[i].predicted);
      CHECK(parallel.points[i].skip_reason == serial.points[i].skip_reason);
    }
  }

  TEST_CASE("statistics: MAPE median and max of absolute errors") {
    const ErrorSummary odd = summarize(std::vector<double>{-10.0, 2.0, 4.0});
    CHECK(odd.count == 3);
    CHECK(odd.mape_pct == doctest::Approx(16.0 / 3.0));
    CHECK(odd.median_abs_pct == doctest::Approx(4.0));
    CHECK(odd.max_abs_pct == doctest::Approx(10.0));
    const ErrorSummary even = summarize(std::vector<double>{-1.0, 3.0, 5.0, -7.0});
    CHECK(even.median_abs_pct == doctest::Approx(4.0));
    CHECK(summarize(std::vector<double>{}).count == 0);
  }

  TEST_CASE("JSON report carries points skipped anchors and summary") {
    const ValidationFile f = parse_validation_text(file_text(), "v.yaml");
    FakePredictor fake;
    const ValidationRun run = run_protocol(f, fake);
    const auto j = nlohmann::json::parse(format_json(f, run, summarize(run)));
    REQUIRE(j["points"].size() == 5);
    CHECK(j["points"][0]["id"] == "P1");
    CHECK(j["points"][0]["measured"].get<double>() == doctest::Approx(3000.0));
    CHECK(j["points"][0]["predicted"].get<double>() == doctest::Approx(3200.0));
    CHECK(j["points"][0]["error_pct"].get<double>() == doctest::Approx(6.667));
    // `accumulation` only where a point states more than one micro-batch (the public golden,
    // tests/sim/golden, holds the DGX-2H BERT points that do).
    CHECK_FALSE(j["points"][0].contains("accumulation"));
    // The share of op time priced from measured kernels only where the run reports it.
    CHECK_FALSE(j["points"][0].contains("measured_kernel_share"));
    CHECK(j["skipped"].size() == 2);
    CHECK(j["skipped"][0]["reason"].get<std::string>().find("nowhere") != std::string::npos);
    CHECK(j["summary"]["count"] == 5);
    CHECK(j["summary"]["skipped"] == 2);
    CHECK(j["summary"].contains("mape_pct"));
    CHECK(j["summary"].contains("median_abs_pct"));
    CHECK(j["summary"].contains("max_abs_pct"));
    CHECK(j["anchors"].size() == 4);
    // Same inputs, same bytes.
    CHECK(format_json(f, run, summarize(run)) ==
          format_json(f, run_protocol(f, fake), summarize(run_protocol(f, fake))));
  }
}

TEST_SUITE("unit") {
  // How much of a prediction rests on measured kernels travels from the run's summary.json
  // (op_costs.measured_time_share) to the point's row of validate --json.
  TEST_CASE("validate --json carries each point's share of op time priced from measured kernels") {
    const std::string text =
        "schema: scalecast-validation/1\npoints:\n" +
        point("A9", "calibrated", 1, 1, "throughput: 400", "    role: anchor\n") +
        point("P9", "calibrated", 8, 1, "throughput: 3000", "    role: predict\n    anchor: A9\n");
    const ValidationFile f = parse_validation_text(text, "v.yaml");
    FakePredictor fake;
    const ValidationRun run = run_protocol(f, fake);
    const auto j = nlohmann::json::parse(format_json(f, run, summarize(run)));
    REQUIRE(j["points"].size() == 1);
    CHECK(j["points"][0]["measured_kernel_share"].get<double>() == doctest::Approx(0.625));
    const Prediction p = parse_summary_json(
        R"({"throughput_samples_per_s": 10, "iteration_time_s": 1,
            "op_costs": {"tiers": {}, "measured_time_share": 0.481}})",
        "summary.json");
    CHECK(p.measured_kernel_share == doctest::Approx(0.481));
    CHECK(parse_summary_json(R"({"throughput_samples_per_s": 10, "iteration_time_s": 1})",
                             "summary.json")
              .measured_kernel_share < 0.0);
  }

  TEST_CASE("an unexpected simulation failure marks its point FAILED and the run goes on") {
    const std::string text =
        file_text() + point("A5", "crashy", 8, 1, "throughput: 3000", "    role: anchor\n") +
        point("P8", "crashy", 8, 1, "throughput: 3000", "    role: predict\n    anchor: A5\n") +
        point("P9", "crashy", 16, 2, "throughput: 5000", "    role: predict\n    anchor: A5\n") +
        point("A6", "crashy", 16, 2, "throughput: 5000", "    role: anchor\n") +
        point("P10", "crashy", 32, 4, "throughput: 9000", "    role: predict\n    anchor: A6\n");
    const ValidationFile f = parse_validation_text(text, "dir/v.yaml");
    FakePredictor fake;
    ProtocolOptions options;
    options.jobs = 2;
    const ValidationRun run = run_protocol(f, fake, options);
    // The point itself fails (P9), or its anchor does (P10 through A6); P8 and the rest run.
    CHECK(result(run, "P8").simulated);
    CHECK(result(run, "P1").simulated);
    CHECK(result(run, "P9").failed);
    CHECK(result(run, "P9").skip_reason ==
          "simulation failed: scalecast run exited 4: engine: out of range");
    CHECK(result(run, "P10").failed);
    CHECK(
        result(run, "P10").skip_reason ==
        "anchor A6 not simulated: simulation failed: scalecast run exited 4: engine: out of range");
    CHECK_FALSE(result(run, "P6").failed);  // Unsupported: skipped, not failed
    CHECK(run.failures() == 3);             // P9, P10 and anchor A6
    const RunSummary s = summarize(run);
    const std::string table = format_table(f, run, s);
    CHECK(table.find("P9                   crashy               FAILED simulation failed") !=
          std::string::npos);
    const auto j = nlohmann::json::parse(format_json(f, run, s));
    int failed = 0;
    for (const auto& k : j["skipped"]) failed += k["failed"].get<bool>() ? 1 : 0;
    CHECK(failed == 2);
  }
}
