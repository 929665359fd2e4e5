#pragma once
// What an LLM run leaves behind (the pipeline job's counterpart of sim/outputs.hpp):
// summary.json keys (documented in scenarios/README.md, "LLM training"), iterations.csv,
// trace.json (Chrome/Perfetto trace: one process per pipeline stage, one thread per stream:
// compute, tp, cp, pp_wait, dp) and the stdout table.

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/llm_runner.hpp"
#include "sim/scenario.hpp"

namespace scalecast::sim {

// The FLOP formulas MFU and HFU are computed with, as summary.json states them.
inline constexpr const char* kMfuFormula =
    "MFU = model FLOPs per iteration (3 x forward: every GEMM and attention's QK^T and AV over "
    "the full sequence, and the logits) / (iteration time x GPUs x dense tensor peak per GPU); "
    "the sources' convention, above 1 where a causal kernel runs half of a long sequence's "
    "attention (HFU counts what runs)";
inline constexpr const char* kHfuFormula =
    "HFU = hardware FLOPs, what the GPUs execute (3 x forward with attention's seq^2 terms as "
    "the kernel runs them: the causal half with flash_attention, all of them without; plus the "
    "recomputed forward: full = every checkpointed block's forward, selective = attention's "
    "seq^2 terms) / (iteration time x GPUs x peak)";

nlohmann::ordered_json llm_point_json(const Scenario& scenario, const LlmPointResult& result);

// iterations.csv (per measured iteration) and trace.json into `dir`.
inline const std::vector<std::string> kLlmPointFiles = {"iterations.csv", "trace.json"};
void write_llm_point_files(const std::string& dir, const LlmPointResult& result);

// The stdout table of an LLM point: iteration, tokens/s, MFU/HFU, breakdown, bottleneck.
std::string format_llm_table(const Scenario& scenario,
                             const std::vector<nlohmann::ordered_json>& points);

// The Perfetto trace of the last measured iteration (exposed for tests).
void write_llm_chrome_trace(std::ostream& out, const LlmPointResult& result);
std::string llm_chrome_trace(const LlmPointResult& result);

}  // namespace scalecast::sim
