#pragma once
// The files a scenario refers to, resolved one way for every command, and the checks made on
// them before anything is simulated. A relative platform, model or calibration path is tried
// in the working directory, then next to the scenario file, then in the data directories
// (platforms/data_dir.hpp), so a shipped scenario runs from any working directory; bare names
// (a platform or zoo model) go to their own lookups. `preflight()` is what run, sweep and
// validate call in the parent process, so bad input exits 1 with file:line:col before any point
// process starts.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario.hpp"

namespace scalecast::cli {

// `ref` as named in a scenario file `scenario_file`: an existing path (see above) or `ref`
// itself when it is nowhere (the loader then reports it).
std::string resolve_input_path(const std::string& ref, const std::string& scenario_file);

// The scenario with its platform, model and calibration references resolved (in memory only:
// the resolved YAML written to outputs keeps them as the user wrote them).
sim::Scenario with_resolved_paths(sim::Scenario s);

struct InputFile {
  std::string role;  // "scenario", "platform", "gpu catalog", "model", "calibration"
  std::string path;  // absolute
};

// Every file the simulation of `scenario_file` (with `overrides`) reads, in a stable order.
std::vector<InputFile> scenario_input_files(const std::string& scenario_file,
                                            const std::vector<std::string>& overrides);

// FNV-1a 64 of the file's bytes, as 16 hex digits (a change detector, not a security hash).
std::string file_fingerprint(const std::string& path);

// Loads the scenario (with overrides) and everything it refers to: the platform, the model,
// each calibration database (errors inside those name their own file and line); a reference
// that is missing or unknown, and GPUs per node beyond the platform's nodes, fail at the
// scenario's key (file:line:col, or "--set" when an override set it). Throws
// common::ConfigError. Returns the loaded scenario.
// Warns (before any point starts) for each of `nodes` that runs at flow fidelity with an
// all-reduce of more than sim::kFlowWarnCommunications communications (sim::flow_cost_warning):
// such a point takes minutes to hours. An LLM scenario warns when sim::estimate_llm_work puts
// its run above sim::kLlmWarnSeconds (sim/README.md, "LLM job cost"). A `jobs:` scenario warns
// for each training job, the warning named after the job.
void warn_slow_flow_points(const sim::Scenario& s, const std::vector<int>& nodes,
                           int gpus_per_node);
// The same for one job (`job`: its name in a mix, or empty).
void warn_slow_flow_points(const sim::Scenario& s, const std::vector<int>& nodes, int gpus_per_node,
                           const std::string& job);

sim::Scenario preflight(const std::string& scenario_file,
                        const std::vector<std::string>& overrides);

// The same checks for the points of a validation file (validation/FORMAT.md), made by
// `validate` before any simulation: each point's system (a platform) and model must load, and
// its GPUs per node (gpus / nodes) fit the platform's nodes; errors at the point's key
// (file:line:col). Node counts are not checked against the platform's size. A point given an
// empty system is not checked (one that validate lists as skipped).
void preflight_validation_file(const std::string& path, const std::vector<std::string>& systems,
                               const std::vector<std::string>& models,
                               const std::vector<int>& gpus_per_node);

}  // namespace scalecast::cli
