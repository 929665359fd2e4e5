#pragma once
// Runs scenario points each in its own process (SimGrid allows one engine per process): the
// parent re-executes this binary as `scalecast run SCENARIO --set ... --point N --point-gpus G
// --point-json FILE [--point-dir DIR]`, up to `jobs` at a time, and reads each child's JSON
// summary back. Shared by `run` (a list of node counts) and `sweep`.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace scalecast::cli {

// This executable's path (what point processes and Slurm jobs re-execute); throws
// std::runtime_error when /proc/self/exe cannot be read.
std::string self_exe();

struct PointJob {
  std::string scenario;                // scenario file
  std::vector<std::string> overrides;  // --set key=value
  int nodes = 1;
  int gpus_per_node = 0;  // 0: scenario's
  std::string out_dir;    // per-point files; "" = none
  // Where the child writes its summary JSON (atomically, so a killed child leaves none); "" = a
  // temporary file. Sweeps keep it, so a rerun skips the points already done.
  std::string json_path;
  // More arguments for the child (a multi-job scenario's `--multi-job K`).
  std::vector<std::string> extra_args = {};
};

// Returns each point's summary JSON in input order. A failed point stops the run (the others are
// killed): ChildInputError with its message when it exited 1 (bad input: the parent exits 1
// too), else std::runtime_error naming it with its stderr tail. Interrupted after SIGINT/SIGTERM
// (point processes killed; finished results kept). `progress`: points done on stderr even when
// stderr is not a terminal (on a terminal it is always shown).
std::vector<nlohmann::ordered_json> run_points(const std::vector<PointJob>& points, int jobs,
                                               bool progress = false);

// Adds scaling efficiency to every point from the 1-GPU and 1-node baselines (run as points
// too when not in the list), and returns the points sorted by node count.
std::vector<nlohmann::ordered_json> run_with_baselines(const std::string& scenario,
                                                       const std::vector<std::string>& overrides,
                                                       const std::vector<int>& nodes,
                                                       const std::string& out_dir, int jobs,
                                                       bool progress = false);

}  // namespace scalecast::cli
