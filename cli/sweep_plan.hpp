#pragma once
// A sweep as files, so that it can be run in pieces: `plan.json` (scenario, overrides, axes, node
// counts) and `points.jsonl` (one point per line, the line index is the point id, baselines of
// the scaling efficiency included) in the sweep folder; each point's summary lands in
// `results/point-<id>.json`, written atomically by the process that simulated it. A local sweep,
// a Slurm array task and a rerun after an interruption all run only the points with no result
// yet, and the merge turns the results into per-combination summaries and `sweep.csv`.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/point_runner.hpp"

namespace scalecast::cli {

struct PlannedPoint {
  int id = 0;
  int combo = 0;          // index into SweepPlan::combos
  int nodes = 1;          // node count
  int gpus_per_node = 0;  // 0: the scenario's
  std::string role;       // "point", "one_gpu" or "one_node" (the efficiency baselines)
  std::string out_dir;    // per-point files; "" for baselines
};

// At most this many planned points (node counts and baselines, times the axes' combinations):
// each is a process, a results file and a line of points.jsonl, and every combination's scenario
// is loaded and checked before the first point runs. More is a common::ConfigError at the --axis
// that passes it (or --nodes).
inline constexpr std::size_t kMaxSweepPoints = 100'000;

struct SweepPlan {
  std::string dir;                               // the sweep folder, absolute
  std::string workdir;                           // where relative paths resolve, absolute
  std::string scenario;                          // absolute
  std::vector<std::string> overrides;            // --set for every point
  std::vector<std::string> keys;                 // axis keys
  std::vector<std::vector<std::string>> combos;  // per combination, its KEY=VALUE settings
  std::vector<int> nodes;
  // An LLM scenario (`parallel:`): one point per combination and node count, no baselines; each
  // point runs the scenario at its node count (`nodes=N`), and the merge writes the LLM columns.
  bool llm = false;
  std::vector<PlannedPoint> points;  // in id order
  // Every file the points read (scenario, platform, GPU catalog, model, calibration databases)
  // with its fingerprint when planned: a rerun, an array task and the merge refuse to go on when
  // one changed (old results would come back or mix with new ones).
  struct Input {
    std::string role, path, fingerprint;
  };
  std::vector<Input> inputs;
};

// Expands the axes (cartesian product of KEY=V1,V2,...) and the node counts; throws
// common::ConfigError on a malformed axis.
SweepPlan make_plan(const std::string& scenario, const std::vector<std::string>& overrides,
                    const std::vector<std::string>& axes, const std::vector<int>& nodes,
                    const std::string& dir, bool llm = false);

// Fills plan.inputs from the scenario with each combination's overrides.
void record_inputs(SweepPlan& plan);
// Throws common::ConfigError naming the first recorded input that changed or disappeared.
void check_inputs(const SweepPlan& plan);

// Writes plan.json and points.jsonl; when the folder already holds a plan, it must be this one
// (a rerun resumes it), else a common::ConfigError says so.
void write_plan(const SweepPlan& plan);
// Reads the plan of a sweep folder; std::runtime_error when there is none or it is malformed.
SweepPlan read_plan(const std::string& dir);

std::string result_path(const SweepPlan& plan, int id);
// Ids of the points with no result file yet, in order.
std::vector<int> missing_points(const SweepPlan& plan);
PointJob point_job(const SweepPlan& plan, int id);

// Per combination: efficiencies from the baselines, the stdout table, summary.json; then
// sweep.csv over all points. Returns the tables. Throws std::runtime_error naming the points
// without a result.
std::string merge_results(const SweepPlan& plan);

// "0-3,5,7-8" for a Slurm --array list.
std::string id_ranges(const std::vector<int>& ids);

}  // namespace scalecast::cli
