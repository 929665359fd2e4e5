#pragma once
// `scalecast run` on a scenario with `jobs:` (several jobs on one machine, scenarios/README.md):
// the parent runs one point process with every job together and one per training job alone on
// the same nodes, then reports each job with its slowdown (iteration time together / alone).

#include <string>
#include <vector>

#include "sim/scenario.hpp"

namespace scalecast::cli {

// The child: simulates the mix (`which` = -1) or training job `which` alone, writes the results
// as JSON to `json_path` and, for the mix, each job's files into `point_dir`/<job name>/.
int run_multi_point(const std::string& scenario, const std::vector<std::string>& overrides,
                    int which, const std::string& json_path, const std::string& point_dir);

// The parent: runs the processes (up to `jobs` at a time), prints the table and, with an
// output folder, writes summary.json (a `jobs` array) and scenario.resolved.yaml there.
int run_multi_scenario(const sim::Scenario& s, const std::string& scenario,
                       const std::vector<std::string>& overrides, const std::string& out_dir,
                       int jobs, bool progress);

}  // namespace scalecast::cli
