// The LLM validation gate: validation/llm-public.yaml (Narayanan et al. SC'21, Korthikanti et al.
// MLSys'23, MegaScale NSDI'24, TorchTitan, NeMo 24.07, Megatron-Bridge) through the real engine.
// It asserts the measured state of 3 Dec 2026 (20:08 UTC) so that it cannot shrink: every anchor
// fitted, every point simulated, and the MAPE and max |error| as guards. Issue 15 asks for
// MAPE <= 10 %, no point beyond +-20 %: met since each framework's own behaviour is simulated
// (Megatron-LM 2021's fp16 all-reduce after backward, NeMo's TP overlap and bf16 gradients,
// TorchTitan's op- and layer-level checkpointing, FP8 operand casts, unfused attention's dropout):
// MAPE 7.22 % over 38 points, max +16.26 % (NA-T1.76p1b; validation/README.md "LLM points", the
// five worst explained). It was MAPE 10.60 %, max +24.38 % before. 7 Dec 2026: MegaScale's
// Megatron-LM baseline runs Megatron's defaults (fp32 gradient reduction with bf16, no DP overlap):
// MAPE 6.88 %, max unchanged. 8 Dec 2026: raised on purpose, not to pass: the LLM groups'
// all-reduces, reduce-scatters and all-gathers now run NCCL's protocol and latency as the
// data-parallel job's do (Communicator::set_nccl; an all-reduce takes NCCL's algorithm choice, NVLS
// on one Hopper node). Every TP call got slower by LL128's wire bytes and NCCL's latency, the
// anchors' more than the predictions' (the 18.4B NA anchor exposes 18 % of its step in TP
// all-reduces, the larger models less), so the fitted efficiencies rose and the NA points, already
// too fast, moved up: NA-T1.310p1b +15.38 -> +18.07 %, NA-T2.175b +13.5 / +12.8 -> +15.8 / +15.0 %,
// while KO-* and MS-* moved down (KO-1t.full +8.20 -> +7.16 %): MAPE 6.88 -> 7.31 %, max 16.26 ->
// 18.07 %. Lower the guards as the model
// improves, never raise them to pass; a point that stops being simulated fails the test.

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "validation/protocol.hpp"
#include "validation/report.hpp"
#include "validation/run_predictor.hpp"
#include "validation/validation_file.hpp"

using namespace scalecast::validation;

namespace {

constexpr double kLlmMapePct = 7.32;
constexpr double kLlmMaxAbsPct = 18.08;

}  // namespace

TEST_SUITE("slow") {
  TEST_CASE(
      "LLM public set: every point simulated, MAPE and max error within the guards of 3 Dec") {
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
    for (const AnchorFit& a : run.anchors) {
      CHECK_MESSAGE(a.fitted, "anchor " << a.id << ": " << a.skip_reason);
      if (a.fitted) CHECK_MESSAGE(std::abs(a.residual_pct) < 1.0, "anchor " << a.id);
    }
    for (const PointResult& r : run.points) {
      CHECK_MESSAGE(!r.failed, r.point->id << " failed: " << r.skip_reason);
      CHECK_MESSAGE(r.simulated, r.point->id << ": " << r.skip_reason);
    }
    CHECK(s.overall.skipped == 0);
    CHECK(s.overall.count == 38);
    CHECK(s.overall.mape_pct <= kLlmMapePct);
    CHECK(s.overall.max_abs_pct <= kLlmMaxAbsPct);
  }
}
