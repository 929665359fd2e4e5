// The LLM validation gate: validation/llm-public.yaml (Narayanan et al. SC'21, Korthikanti et al.
// MLSys'23, MegaScale NSDI'24, TorchTitan, NeMo 24.07, Megatron-Bridge) through the real engine.
// It asserts the measured state of 3 Dec 2026 so that it cannot shrink: the exact set of skipped
// points (each skipped because its anchor cannot be fitted, with that reason), and the MAPE and
// max |error| of the simulated ones as guards. Issue 15 asks for MAPE <= 10 %, no point beyond
// +-20 % over the public rows: the simulated points meet it (MAPE 9.50 %, max 17.88 % at
// TT-H100.8b.g128.float8), but 10 of 38 predict points are not simulated because two anchors do
// not converge (validation/README.md "LLM validation"): NEMO2407.gpt3-20b (TP 2, DP 32: its DP
// ring is simulated over one NIC pair per node where NCCL uses all eight, so exposed DP
// communication alone nearly fills the measured step) and TT-A100.l2-13b.b2.none (FSDP on 64
// A100: the simulated ZeRO-3 traffic is longer than the measured step). A point leaving or joining
// the skip set fails the test: update it in the change that explains why; lower the guards as
// the model improves, never raise them to pass.

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "validation/protocol.hpp"
#include "validation/report.hpp"
#include "validation/run_predictor.hpp"
#include "validation/validation_file.hpp"

using namespace scalecast::validation;

namespace {

constexpr double kLlmMapePct = 9.6;
constexpr double kLlmMaxAbsPct = 18.0;
const std::set<std::string> kLlmSkipped = {
    "TT-A100.l3-8b.b1.sel-layer",  "TT-A100.l3-8b.b1.sel-op",  "TT-A100.l3-70b.b1.full",
    "TT-A100.l2-13b.b2.sel-layer", "TT-A100.l2-70b.b1.sel-op", "TT-A100.l2-70b.b2.full",
    "NEMO2407.gpt3-175b",          "NEMO2407.llama2-70b",      "NEMO2407.llama3-70b",
    "NEMO2407.nemotron-340b",
};
const std::set<std::string> kLlmUnfitted = {"TT-A100.l2-13b.b2.none", "NEMO2407.gpt3-20b"};

}  // namespace

TEST_SUITE("slow") {
  TEST_CASE("LLM public set: exact skips, MAPE and max error within the guards of 3 Dec") {
    const ValidationFile file = load_validation_file("validation/llm-public.yaml");
    const auto dir =
        std::filesystem::path(SCALECAST_BINARY_DIR) / "tests" / "validation" / "llm_public_set";
    std::filesystem::remove_all(dir);
    RunPredictor predictor(std::string(SCALECAST_BINARY_DIR) + "/cli/scalecast", dir.string());
    ProtocolOptions options;
    options.jobs = 2;
    const ValidationRun run = run_protocol(file, predictor, options);
    const RunSummary s = summarize(run);
    MESSAGE(format_table(file, run, s));
    std::set<std::string> unfitted;
    for (const AnchorFit& a : run.anchors) {
      CHECK_MESSAGE(!a.failed, "anchor " << a.id << " failed: " << a.skip_reason);
      if (!a.fitted) {
        unfitted.insert(a.id);
        CHECK_MESSAGE(a.skip_reason.find("anchor fit did not converge") != std::string::npos,
                      a.id << ": " << a.skip_reason);
      }
    }
    CHECK(unfitted == kLlmUnfitted);
    std::set<std::string> skipped;
    for (const PointResult& r : run.points) {
      CHECK_MESSAGE(!r.failed, r.point->id << " failed: " << r.skip_reason);
      if (!r.simulated) {
        skipped.insert(r.point->id);
        CHECK_MESSAGE(r.skip_reason.find("anchor fit did not converge") != std::string::npos,
                      r.point->id << ": " << r.skip_reason);
      }
    }
    CHECK(skipped == kLlmSkipped);
    CHECK(s.overall.count == 28);
    CHECK(s.overall.mape_pct <= kLlmMapePct);
    CHECK(s.overall.max_abs_pct <= kLlmMaxAbsPct);
  }
}
