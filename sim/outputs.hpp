#pragma once
// What a run leaves behind (docs/architecture.md, "Outputs"): summary.json (nlohmann::ordered_json
// so key order is stable; no wall-clock times or paths, so equal inputs give equal bytes),
// iterations.csv, ops.csv (op, stream, start, end, cost-model tier), trace.json in Chrome trace
// event format (one process per node, one thread per GPU stream, the sampled nodes only) and
// the resolved scenario; plus the stdout scaling table.

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/job.hpp"
#include "sim/scenario.hpp"

namespace scalecast::sim {

// One point's summary; "scaling_efficiency" is filled in by add_efficiency() once the 1-GPU and
// 1-node baselines are known.
nlohmann::ordered_json point_json(const Scenario& scenario, const JobResult& result);

// Sets point["scaling_efficiency"] = {vs_1_gpu, vs_1_node} from the baselines' throughputs.
void add_efficiency(nlohmann::ordered_json& point, double throughput_1_gpu,
                    double throughput_1_node);

// Where a run puts a point's files inside its --out folder (the writers and run --out's manifest
// both name them so): nodes-N/ per node count of a list, with that point's own point.json, and
// jobs/NAME/ per training job of a `jobs:` scenario.
inline std::string nodes_folder(int nodes) { return "nodes-" + std::to_string(nodes); }
inline std::string job_folder(const std::string& job) { return "jobs/" + job; }
inline constexpr const char* kPointJson = "point.json";

// The per-point files: iterations.csv, ops.csv, trace.json into `dir`.
inline const std::vector<std::string> kPointFiles = {"iterations.csv", "ops.csv", "trace.json"};
void write_point_files(const std::string& dir, const JobResult& result);

// summary.json (one point: the point's keys at top level; several: under "points") and
// scenario.resolved.yaml into `dir`.
inline const std::vector<std::string> kSummaryFiles = {"summary.json", "scenario.resolved.yaml"};
void write_summary(const std::string& dir, const Scenario& scenario,
                   const std::vector<nlohmann::ordered_json>& points);

// The stdout table: nodes, GPUs, iteration time, throughput, efficiencies, breakdown.
std::string format_table(const Scenario& scenario,
                         const std::vector<nlohmann::ordered_json>& points);

// Chrome trace of the traced ranks, written event by event (outputs.cpp says why); the string
// form is for tests.
void write_chrome_trace(std::ostream& out, const JobResult& result);
std::string chrome_trace(const JobResult& result);

}  // namespace scalecast::sim
