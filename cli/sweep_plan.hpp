#pragma once
// A sweep as files, so that it can be run in pieces: `plan.json` (scenario, overrides, axes, node
// counts) and `points.jsonl` (one point per line, the line index is the point id, baselines of
// the scaling efficiency included) in the sweep folder; each point's summary lands in
// `results/point-<id>.json`, written atomically by the process that simulated it. A local sweep,
// a Slurm array task and a rerun after an interruption all run only the points with no result
// yet, and the merge turns the results into per-combination summaries and `sweep.csv`.
// Nothing in the folder is trusted: read_plan checks plan.json and derives the points from it
// (points.jsonl must hold exactly those), every point's files go inside the folder given with
// --out (a copied or moved sweep folder works on itself), and the merge checks each result's
// figures against its planned point.

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
  // The folder of its per-point files relative to the sweep folder ("points", "points/nodes-2",
  // "combo-3/nodes-2"); "" for baselines. point_dir() gives its path.
  std::string folder;
};

// Node counts of a plan: whole numbers from 1 to this, each once (as `--nodes` takes them).
inline constexpr int kMaxSweepNodes = 1'000'000;

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
// common::ConfigError on a malformed axis. The points are plan_points(combinations, nodes, llm).
SweepPlan make_plan(const std::string& scenario, const std::vector<std::string>& overrides,
                    const std::vector<std::string>& axes, const std::vector<int>& nodes,
                    const std::string& dir, bool llm = false);

// The points of a sweep of `combos` combinations over `nodes`, in id order: per combination one
// per node count, then (not for an LLM sweep) the 1-GPU baseline and, without 1 in `nodes`, the
// 1-node one. make_plan plans them; read_plan derives them again from plan.json and refuses a
// points.jsonl that differs.
std::vector<PlannedPoint> plan_points(std::size_t combos, const std::vector<int>& nodes, bool llm);
// The folder of a point's files inside plan.dir; "" for a baseline.
std::string point_dir(const SweepPlan& plan, const PlannedPoint& p);

// Fills plan.inputs from the scenario with each combination's overrides.
void record_inputs(SweepPlan& plan);
// Throws common::ConfigError naming the first recorded input that changed or disappeared.
void check_inputs(const SweepPlan& plan);

// Writes plan.json and points.jsonl; when the folder already holds a plan, it must be this one
// (a rerun resumes it), else a common::ConfigError says so.
void write_plan(const SweepPlan& plan);
// Reads the plan of a sweep folder; common::ConfigError when there is none or it is malformed:
// plan.json's keys of the wrong type, node counts that are not whole numbers 1..kMaxSweepNodes
// each once, combinations that are not the product make_plan gives, a scenario that is no file
// or not among the recorded inputs, a points.jsonl other than plan_points() of plan.json. An
// out_dir in points.jsonl is the point's folder relative to the sweep folder; an absolute one
// (plans of earlier versions) is accepted when it ends in that folder, and ignored: the folder
// is always the one inside `dir`.
SweepPlan read_plan(const std::string& dir);

std::string result_path(const SweepPlan& plan, int id);
// Ids of the points with no result file yet, in order.
std::vector<int> missing_points(const SweepPlan& plan);
PointJob point_job(const SweepPlan& plan, int id);

// Per combination: efficiencies from the baselines, the stdout table, summary.json; then
// sweep.csv over all points. Returns the tables. Throws common::ConfigError naming the points
// without a result, and a result whose figures cannot be its point's (a time or throughput
// that is not finite and > 0, a breakdown term < 0, nodes or GPUs other than planned) naming
// its file, its point and the command that reruns it.
std::string merge_results(const SweepPlan& plan);

// "0-3,5,7-8" for a Slurm --array list.
std::string id_ranges(const std::vector<int>& ids);

}  // namespace scalecast::cli
