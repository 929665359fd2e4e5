// `scalecast run`: simulate one scenario (or each node count of a list, each in its own process).

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include <filesystem>

#include "calibration/calibrated_cost_model.hpp"
#include "calibration/database.hpp"
#include "cli/commands.hpp"
#include "cli/database_cache.hpp"
#include "cli/point_runner.hpp"
#include "cli/run_guard.hpp"
#include "cli/run_multi.hpp"
#include "cli/run_outputs.hpp"
#include "cli/scenario_inputs.hpp"
#include "common/atomic_file.hpp"
#include "common/logging.hpp"
#include "sim/cluster.hpp"
#include "sim/llm_outputs.hpp"
#include "sim/llm_runner.hpp"
#include "sim/outputs.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_runner.hpp"
#include "sim/time_to_train.hpp"

namespace scalecast::cli {
namespace {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string out_dir;
  int jobs = 0;
  bool progress = false;
  // Internal: this process simulates one point (set by the parent process).
  int point = 0;
  int point_gpus = 0;
  std::string point_json;
  std::string point_dir;
  int point_progress_fd = -1;  // the parent's stderr, for iteration progress (--progress)
  // Internal, a scenario with `jobs:`: -1 = every job together, K = training job K alone.
  std::optional<int> multi_job;
};

// The scenario's calibration databases merged (calibration/database.hpp rules); paths are
// resolved already (scenario_inputs.hpp). Kernel rows feed the cost model, measured all-reduces
// NCCL's collective model (sim::run_point).
calibration::Database scenario_database(const sim::Scenario& s) {
  calibration::Database db;
  for (const std::string& path : s.calibration)
    db.merge(cached_database(path));  // parsed once per process (a server preloads)
  return db;
}

// The scenario's cost model: its database priced through the calibrated model's tiers (exact,
// interpolated, fitted, datasheet), with the scenario's framework efficiency.
std::unique_ptr<calibration::CostModel> make_cost_model(const sim::Scenario& s,
                                                        const calibration::Database& db) {
  calibration::CostModelOptions options;
  options.framework_efficiency = s.framework_efficiency;
  return std::make_unique<calibration::CalibratedCostModel>(db, options);
}

// MFU counts attention over the full sequence (the sources' convention, kMfuFormula), so a
// causal kernel at a long sequence can put it above 100 %; HFU counts what the GPUs execute and
// passes 100 % only when a framework efficiency above 1 runs kernels beyond the peak. Either
// is said, not hidden.
void warn_utilisation_above_peak(const sim::Scenario& s, const nlohmann::ordered_json& point) {
  const double mfu = point["mfu"].get<double>(), hfu = point["hfu"].get<double>();
  if (mfu > 1.0)
    spdlog::warn(
        "MFU {:.1f} % is above 100 %: model FLOPs count attention over the full sequence (the "
        "sources' convention, summary.json mfu_formula) while the causal kernel runs half of it; "
        "HFU {:.1f} % is the share of the peak the GPUs execute",
        100.0 * mfu, 100.0 * hfu);
  if (hfu > 1.0)
    spdlog::warn(
        "HFU {:.1f} % is above 100 %: the kernels run faster than the GPU's peak, which "
        "framework_efficiency {} (above 1) allows; fit it to a measurement (scalecast validate) "
        "or leave it at 1",
        100.0 * hfu, s.framework_efficiency);
}

// The data-parallel counterpart: compute ops the cost model priced faster than the GPU's peak.
void warn_ops_above_peak(const sim::Scenario& s, const nlohmann::ordered_json& point) {
  if (!point.contains("op_costs") || !point["op_costs"].contains("above_peak")) return;
  const auto& a = point["op_costs"]["above_peak"];
  if (s.framework_efficiency > 1.0)
    spdlog::warn(
        "{} compute ops of the step run faster than the GPU's peak (up to {:.2f}x), which "
        "framework_efficiency {} (above 1) allows; fit it to a measurement (scalecast validate) "
        "or lower it",
        a["ops"].get<int>(), a["max_rate_over_peak"].get<double>(), s.framework_efficiency);
  else
    spdlog::warn(
        "{} compute ops of the step run faster than the GPU's datasheet peak (up to {:.2f}x): "
        "the calibration data times them faster than the GPU catalog's peak allows (boost "
        "clocks above the datasheet's, or a wrong catalog entry)",
        a["ops"].get<int>(), a["max_rate_over_peak"].get<double>());
}

int run_one_point(const RunOptions& o) {
  // Paths as the parent's preflight resolved them (so the scenario runs from any directory).
  // The parent checked the inputs already; a point started on its own (validate's children,
  // a Slurm array task) checks them again, so a missing file is still a located error.
  const sim::Scenario s = with_resolved_paths(preflight(o.scenario, o.overrides));
  const auto t0 = std::chrono::steady_clock::now();
  const calibration::Database db = scenario_database(s);
  const auto cost_model = make_cost_model(s, db);
  sim::PointRequest request(o.point, o.point_gpus);
  if (o.point_progress_fd >= 0) {
    // A long point (flow fidelity at scale) reports its simulated iterations on the parent's
    // stderr: a line at most every 10 s of wall time, and the last one. Never into results.
    auto last = std::make_shared<std::chrono::steady_clock::time_point>(t0);
    request.on_iteration = [fd = o.point_progress_fd, nodes = o.point, t0, last](int done,
                                                                                 int total) {
      const auto now = std::chrono::steady_clock::now();
      if (done < total && std::chrono::duration<double>(now - *last).count() < 10.0) return;
      *last = now;
      const std::string line = fmt::format(
          "scalecast: [progress] point {} nodes: iteration {}/{} simulated, wall {:.1f} s\n", nodes,
          done, total, std::chrono::duration<double>(now - t0).count());
      [[maybe_unused]] const ssize_t n = ::write(fd, line.data(), line.size());
    };
  }
  if (s.llm) {
    // LLM training: the pipeline job (sim/llm_runner.hpp).
    const sim::LlmPointResult r = sim::run_llm_point(s, request, *cost_model);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    spdlog::info("point {} GPUs: {:.3f} s simulated per iteration, {:.2f} s wall", r.gpus,
                 r.pipeline.iteration_time_s, wall);
    if (!o.point_dir.empty()) sim::write_llm_point_files(o.point_dir, r);
    common::write_file_atomic(o.point_json, sim::llm_point_json(s, r).dump() + "\n");
    return kExitOk;
  }
  const sim::JobResult r = sim::run_point(s, request, *cost_model, &db);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  spdlog::info("point {} nodes x {} GPUs: {:.3f} s simulated per iteration, {:.2f} s wall", r.nodes,
               r.gpus_per_node, r.iteration_time_s, wall);
  if (!o.point_dir.empty()) sim::write_point_files(o.point_dir, r);
  common::write_file_atomic(o.point_json, sim::point_json(s, r).dump() + "\n");
  return kExitOk;
}

int run_scenario(const RunOptions& o) {
  install_interrupt_handlers();
  // Every check that needs no simulation, here, before any point process starts.
  const sim::Scenario s = preflight(o.scenario, o.overrides);
  // In the parent, at the `nodes` key, before any child; say when the machine is not the file's.
  // (Several jobs never grow the machine: their loader checked their nodes against it.)
  const sim::MachineSizes sizes =
      s.multi ? sim::MachineSizes{} : sim::check_node_counts(s, s.nodes);
  if (sizes.largest_nodes != sizes.file_nodes) {
    spdlog::info("{}: the machine is resized from the platform file's {} nodes to {} ({})",
                 s.platform, sizes.file_nodes, sizes.largest_nodes,
                 s.cluster_nodes > 0 ? "cluster.nodes"
                                     : "cluster.nodes: fit, grown to the largest point's nodes");
  }
  // A flow point that will take minutes says so before it starts (issue 18: flow costs one
  // communication per ring step and rank).
  warn_slow_flow_points(s, s.nodes, sizes.gpus_per_node);
  std::optional<OutputLock> lock;  // two runs into one --out would mix their files
  std::error_code ec;
  const bool fresh = !o.out_dir.empty() && !std::filesystem::exists(o.out_dir, ec);
  if (!o.out_dir.empty()) {
    lock.emplace(o.out_dir);
    // An earlier run's files go first (they would mix with this run's), then this run says
    // what it writes (cli/run_outputs.hpp).
    remove_previous_outputs(o.out_dir);
    write_manifest(o.out_dir, planned_outputs(s));
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<nlohmann::ordered_json> points;
  try {
    if (s.multi) {  // several jobs on one machine (run_multi.hpp)
      run_multi_scenario(s, o.scenario, o.overrides, o.out_dir, o.jobs, o.progress);
      return kExitOk;
    }
    if (s.llm) {
      // One size, no 1-GPU or 1-node baselines (an LLM job needs tp x pp x cp x dp GPUs).
      points = run_points({{o.scenario, o.overrides, s.nodes.front(), 0, o.out_dir, ""}}, o.jobs,
                          o.progress);
      std::fputs(sim::format_llm_table(s, points).c_str(), stdout);
      warn_utilisation_above_peak(s, points.front());
    } else {
      points = run_with_baselines(o.scenario, o.overrides, s.nodes, o.out_dir, o.jobs, o.progress);
      for (auto& p : points) sim::add_time_to_train(s, p);  // with `time_to_train` only
      std::fputs(sim::format_table(s, points).c_str(), stdout);
      std::fputs(sim::format_time_to_train(s, points).c_str(), stdout);
      warn_ops_above_peak(s, points.front());
    }
    std::fflush(stdout);
    if (!o.out_dir.empty()) sim::write_summary(o.out_dir, s, points);
  } catch (const Interrupted&) {
    throw;  // finished points stay where they are
  } catch (...) {
    // A failed run (a full disk, a failed point) leaves no half-written folder it created.
    if (fresh && !interrupted()) std::filesystem::remove_all(o.out_dir, ec);
    throw;
  }
  spdlog::info("{} point(s) in {:.2f} s wall", points.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run", "Simulate a scenario: throughput, iteration time, scaling efficiency, breakdown");
  sub->add_option("scenario", opts->scenario, "Scenario YAML file (see scenarios/README.md)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option(
         "--set", opts->overrides,
         "Override a scenario key, e.g. --set nodes=4608 --set allreduce.algorithm=ring --set "
         "jobs.1.nodes=32 (a number indexes a list)")
      ->take_all();
  sub->add_option("-o,--out", opts->out_dir,
                  "Write summary.json, iterations.csv, ops.csv, trace.json and the resolved "
                  "scenario to this folder")
      ->check(kNonEmpty);
  sub->add_option("-j,--jobs", opts->jobs,
                  "Processes to run in parallel when the scenario lists several node counts "
                  "(default: number of cores)")
      ->check(CLI::Range(0, 4096));
  sub->add_flag("--progress", opts->progress,
                "Report points done on stderr even when it is not a terminal (on a terminal: "
                "always)");
  sub->add_option("--point", opts->point, "Internal: simulate only this node count")->group("");
  sub->add_option("--point-gpus", opts->point_gpus, "Internal: GPUs per node")->group("");
  sub->add_option("--point-json", opts->point_json, "Internal: point summary file")->group("");
  sub->add_option("--point-dir", opts->point_dir, "Internal: point output folder")->group("");
  sub->add_option("--multi-job", opts->multi_job,
                  "Internal: -1 every job of a jobs: scenario together, K job K alone")
      ->group("");
  sub->add_option("--point-progress-fd", opts->point_progress_fd,
                  "Internal: write iteration progress to this inherited descriptor")
      ->group("");
  sub->callback([opts, &action] {
    action = [opts]() -> int {
      if (opts->multi_job)
        return run_multi_point(opts->scenario, opts->overrides, *opts->multi_job, opts->point_json,
                               opts->point_dir);
      return opts->point > 0 ? run_one_point(*opts) : run_scenario(*opts);
    };
  });
}

}  // namespace scalecast::cli
