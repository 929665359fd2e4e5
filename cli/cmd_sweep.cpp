// `scalecast sweep`: run a scenario over a grid of parameters, one process per point, planned as
// files (cli/sweep_plan.hpp) so that a sweep resumes after an interruption and runs as a Slurm
// job array.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/point_runner.hpp"
#include "cli/run_guard.hpp"
#include "cli/scenario_inputs.hpp"
#include "cli/sweep_plan.hpp"
#include "common/atomic_file.hpp"
#include "common/config_error.hpp"
#include "platforms/data_dir.hpp"
#include "sim/cluster.hpp"
#include "sim/multi_job_scenario.hpp"
#include "sim/outputs.hpp"
#include "sim/scenario.hpp"
#include "sim/time_to_train.hpp"
#include "validation/run_predictor.hpp"

namespace scalecast::cli {
namespace {

struct SweepOptions {
  std::string scenario;
  std::string nodes;
  std::vector<std::string> axes;
  std::vector<std::string> overrides;
  std::string out_dir = "sweep";
  int jobs = 0;
  bool slurm = false;               // plan and write Slurm scripts instead of running
  std::vector<std::string> sbatch;  // extra sbatch arguments for the scripts
  int slurm_max_running = 0;        // array throttle (%N), 0: none
  int run_task = -1;                // run this planned point (a Slurm array task)
  bool merge = false;               // merge the results of a planned sweep
  bool missing = false;             // print the ids of the points without a result
  bool progress = false;            // points done on stderr even when it is not a terminal
};

// "1,2,4" or "1..4608" (doubling from the first, plus the last). Every item is a whole number
// from 1 to 1,000,000 written in full: "2x" or "1.5" is an error, not 2 or 1.
std::vector<int> parse_nodes(const std::string& text) {
  constexpr int kMaxNodes = kMaxSweepNodes;
  const auto bad = [&](const std::string& why) {
    return common::ConfigError(
        "--nodes " + text, 0, 0, "",
        "expected a list like 1,2,4 or a doubling range like 1..4608 of node counts from 1 to "
        "1,000,000" +
            why);
  };
  const auto count = [&](const std::string& item) {
    int n = 0;
    const char* end = item.data() + item.size();
    const auto [ptr, ec] = std::from_chars(item.data(), end, n);
    if (item.empty() || ec != std::errc() || ptr != end || n < 1 || n > kMaxNodes)
      throw bad(" (\"" + item + "\" is not one)");
    return n;
  };
  std::vector<int> out;
  const auto dots = text.find("..");
  if (dots != std::string::npos) {
    const int lo = count(text.substr(0, dots)), hi = count(text.substr(dots + 2));
    if (hi < lo) throw bad(" (the range ends below its start)");
    for (long n = lo; n <= hi; n *= 2) out.push_back(static_cast<int>(n));
    if (out.back() != hi) out.push_back(hi);
  } else {
    std::size_t start = 0;
    for (std::size_t comma; (comma = text.find(',', start)) != std::string::npos; start = comma + 1)
      out.push_back(count(text.substr(start, comma - start)));
    out.push_back(count(text.substr(start)));
  }
  // Each count is one point folder (nodes-N/): a repeated one ran twice into it.
  for (std::size_t i = 1; i < out.size(); ++i)
    if (std::find(out.begin(), out.begin() + static_cast<long>(i), out[i]) !=
        out.begin() + static_cast<long>(i))
      throw bad(" (" + std::to_string(out[i]) + " is listed twice)");
  return out;
}

// `text` as one bash word: single-quoted, with inner single quotes as '\''.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What goes into a Slurm script must be a bash word and a comment line: a newline in the sweep
// folder's path ended the comment that names it and made the rest a command of the script.
void check_script_text(const std::string& text, const std::string& option) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      throw common::ConfigError(
          "command line", 0, 0, option,
          fmt::format("a control character (byte 0x{:02x}) cannot go into a Slurm script; give "
                      "{} without newlines, tabs or other control characters",
                      u, option == "--sbatch" ? "the argument" : "a path"));
  }
}

// The Slurm scripts of a planned sweep: an array job whose task i runs point i, a merge job
// after it, and submit.sh, which submits both (only the points without a result: a resubmission
// after failures or a time limit runs what is left). submit.sh finds the sweep folder from its own
// path and hands it to both jobs as their argument (Slurm runs a copy of a batch script from its
// spool directory, so they cannot find it themselves): a sweep folder copied or moved, to scratch
// or another cluster, runs and merges where it is, not where it was planned. Every path and
// extra sbatch argument is a single-quoted bash word (a sweep folder may hold spaces or quotes);
// the log files are named on sbatch's command line in submit.sh, not in #SBATCH lines, which are
// not shell words.
void write_slurm_scripts(const SweepPlan& plan, const SweepOptions& o) {
  const std::string exe = shell_quote(self_exe());
  const std::string dir = plan.dir + "/slurm";
  std::filesystem::create_directories(dir);
  std::string sbatch_args;
  for (const std::string& a : o.sbatch) sbatch_args += " " + shell_quote(a);
  const std::string qwork = shell_quote(plan.workdir);
  const auto job_script = [&](const std::string& what, const std::string& name,
                              const std::string& command) {
    return fmt::format(
        "#!/bin/bash\n"
        "# {0} (scalecast sweep --slurm). Its argument is the sweep folder, which submit.sh "
        "passes.\n"
        "#SBATCH --job-name={1}\n"
        "#SBATCH --ntasks=1\n"
        "sweep_dir=${{1:?usage: $0 SWEEP_DIR (run slurm/submit.sh, which passes it)}}\n"
        "cd {2} || exit 1\n"
        "exec {3} {4} --out \"$sweep_dir\"\n",
        what, name, qwork, exe, command);
  };
  common::write_file_atomic(
      dir + "/array.sh",
      job_script("One sweep point per array task: task i runs point i of SWEEP_DIR/points.jsonl",
                 "scalecast-sweep", "--quiet sweep --run-task \"$SLURM_ARRAY_TASK_ID\""));
  common::write_file_atomic(
      dir + "/merge.sh",
      job_script("Merges the sweep's results into summaries and sweep.csv once every point ran",
                 "scalecast-merge", "sweep --merge"));
  common::write_file_atomic(
      dir + "/submit.sh",
      fmt::format(
          "#!/bin/bash\n"
          "# Submits the points of the sweep folder this script is in (planned as {0}) that have "
          "no result yet as a job array, and the merge after them.\n"
          "# Extra arguments go to both sbatch calls (e.g. --wait on the merge: "
          "SCALECAST_MERGE_WAIT=1).\n"
          "set -euo pipefail\n"
          "slurm_dir=$(cd -- \"$(dirname -- \"${{BASH_SOURCE[0]}}\")\" && pwd)\n"
          "sweep_dir=$(dirname -- \"$slurm_dir\")\n"
          "ids=$({1} sweep --missing --out \"$sweep_dir\")\n"
          "wait_flag=()\n"
          "[[ ${{SCALECAST_MERGE_WAIT:-0}} == 1 ]] && wait_flag=(--wait)\n"
          "merge=(--output=\"$slurm_dir/merge.out\"{2} \"$@\" \"$slurm_dir/merge.sh\" "
          "\"$sweep_dir\")\n"
          "if [[ -z $ids ]]; then\n"
          "  exec sbatch --parsable \"${{wait_flag[@]}}\" \"${{merge[@]}}\"\n"
          "fi\n"
          "jid=$(sbatch --parsable --array=\"$ids\"{3} --output=\"$slurm_dir/point-%a.out\"{2} "
          "\"$@\" \"$slurm_dir/array.sh\" \"$sweep_dir\")\n"
          "echo \"array job $jid: points $ids\" >&2\n"
          "exec sbatch --parsable \"${{wait_flag[@]}}\" --dependency=afterok:\"$jid\" "
          "\"${{merge[@]}}\"\n",
          shell_quote(plan.dir), exe, sbatch_args,
          o.slurm_max_running > 0 ? fmt::format("%{}", o.slurm_max_running) : ""));
  std::filesystem::permissions(dir + "/submit.sh", std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
}

// scaling.png and breakdown.png next to sweep.csv, drawn by scripts/plot_sweep.py with Debian's
// python3 (which carries python3-matplotlib; a pyenv shim first on PATH may not). Plots are an
// extra: without python3 or the script the sweep still succeeds, and says why there are none.
void draw_plots(const std::string& dir) {
  const std::string script = platforms::find_data_file("scripts/plot_sweep.py");
  const std::string python =
      std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  if (script.empty()) {
    spdlog::warn("sweep: no plots: scripts/plot_sweep.py not found (set SCALECAST_DATA_DIR)");
    return;
  }
  std::string output;
  if (validation::run_process({python, script, dir}, output) != 0) {
    while (!output.empty() && output.back() == '\n') output.pop_back();
    const std::size_t nl = output.find_last_of('\n');  // the last line: the error itself
    spdlog::warn("sweep: no plots: {} {} failed (python3-matplotlib missing?): {}", python, script,
                 nl == std::string::npos ? output : output.substr(nl + 1));
    return;
  }
  spdlog::info("sweep: plots {}/scaling.png, {}/breakdown.png{}", dir, dir,
               std::filesystem::exists(dir + "/time_to_train.png")
                   ? fmt::format(", {}/time_to_train.png", dir)
                   : std::string());
}

// Runs `check` on one combination; an error the scenario loader names as `--set KEY=V` for one of
// the combination's axis values is that --axis value (the user gave no such --set), with `where`
// (" at --nodes N") when the point's node count decided it.
template <typename Check>
void axis_errors(const std::vector<std::string>& combo, const std::string& where, Check check) {
  try {
    check();
  } catch (const common::ConfigError& e) {
    for (const std::string& kv : combo)
      if (e.file() == "--set " + kv)
        throw common::ConfigError("--axis " + kv + where, e.line(), e.column(), e.key_path(),
                                  e.message());
    throw;
  }
}

int run_sweep(const SweepOptions& o) {
  install_interrupt_handlers();
  if (o.run_task >= 0 || o.merge || o.missing) {
    if (!o.scenario.empty())
      throw common::ConfigError("command line", 0, 0, "sweep",
                                "--run-task, --merge and --missing take the sweep folder (--out), "
                                "not a scenario");
    const SweepPlan plan = read_plan(o.out_dir);
    if (o.missing) {  // only the results folder: no scenario, no working directory
      fmt::print("{}\n", id_ranges(missing_points(plan)));
      return kExitOk;
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(plan.workdir, ec))
      throw common::ConfigError(
          plan.dir + "/plan.json", 0, 0, "workdir",
          fmt::format("the sweep's working directory {} is gone (the scenario's relative paths "
                      "resolve there); recreate it, or plan the sweep afresh into another --out",
                      plan.workdir));
    std::filesystem::current_path(plan.workdir);  // the scenario's relative paths
    check_inputs(plan);     // a point or merge from changed inputs would mix old and new results
    if (o.run_task >= 0) {  // array tasks of one sweep run at once: no folder lock
      run_points({point_job(plan, o.run_task)}, 1);
      return kExitOk;
    }
    const OutputLock lock(plan.dir);
    std::fputs(merge_results(plan).c_str(), stdout);
    draw_plots(plan.dir);
    return kExitOk;
  }
  if (o.scenario.empty())
    throw common::ConfigError("command line", 0, 0, "sweep",
                              "give a scenario, or --run-task ID / --merge / --missing with --out");
  if (o.slurm) {
    check_script_text(std::filesystem::absolute(o.out_dir).string(), "--out");
    check_script_text(std::filesystem::current_path().string(), "the working directory");
    check_script_text(self_exe(), "the scalecast executable's path");
    for (const std::string& a : o.sbatch) check_script_text(a, "--sbatch");
  }
  const sim::Scenario base = preflight(o.scenario, o.overrides);
  const std::vector<int> nodes = o.nodes.empty() ? base.nodes : parse_nodes(o.nodes);
  SweepPlan plan =
      make_plan(o.scenario, o.overrides, o.axes, nodes, o.out_dir, base.llm.has_value());
  std::optional<sim::KeyLocation> nodes_at;
  if (!o.nodes.empty()) nodes_at = sim::KeyLocation{"command line", 0, 0, "--nodes"};
  if (base.multi)
    throw common::ConfigError(base.multi->at.file, base.multi->at.line, base.multi->at.column,
                              base.multi->at.key,
                              "sweep takes a single-job scenario; run a scenario with jobs: "
                              "with `scalecast run`");
  sim::check_node_counts(base, nodes, nodes_at);
  // Each node count's global batch inside the time_to_train table (unless extrapolate), at the
  // count's key (`nodes` entries, or --nodes).
  std::vector<sim::KeyLocation> ttt_at =
      o.nodes.empty() ? base.nodes_at : std::vector<sim::KeyLocation>{*nodes_at};
  if (plan.combos.size() >= 1000)  // about 12 ms each on a 2026 core: say why nothing runs yet
    spdlog::info("sweep: checking the scenario of each of {} combinations before planning",
                 plan.combos.size());
  for (const auto& combo : plan.combos) {  // every combination is checked before anything runs
    std::vector<std::string> sets = o.overrides;
    sets.insert(sets.end(), combo.begin(), combo.end());
    if (plan.llm) {
      // Each point is the LLM job at its node count: its parallel map must hold there (and the
      // stages fit), checked now at the keys rather than in a child.
      for (int n : nodes) {
        std::vector<std::string> at_n = sets;
        at_n.push_back("nodes=" + std::to_string(n));
        axis_errors(combo, fmt::format(" at {} {}", o.nodes.empty() ? "nodes" : "--nodes", n),
                    [&] { sim::check_node_counts(preflight(o.scenario, at_n), {n}, nodes_at); });
      }
      continue;
    }
    // Every node count must be a machine the platform's topology rule builds (sim/cluster.hpp).
    axis_errors(combo, "", [&] {
      const sim::Scenario s = preflight(o.scenario, sets);
      warn_slow_flow_points(s, nodes, sim::check_node_counts(s, nodes, nodes_at).gpus_per_node);
      sim::check_time_to_train(s, nodes, ttt_at);
    });
  }
  record_inputs(plan);
  const OutputLock lock(plan.dir);  // two sweeps into one folder would mix their files
  write_plan(plan);
  const std::vector<int> missing = missing_points(plan);
  spdlog::info("sweep: {} points planned in {}, {} with a result, {} to run", plan.points.size(),
               plan.dir, plan.points.size() - missing.size(), missing.size());
  if (o.slurm) {
    write_slurm_scripts(plan, o);
    fmt::print("planned {} points in {} ({} to run); submit with: {}/slurm/submit.sh\n",
               plan.points.size(), plan.dir, missing.size(), plan.dir);
    return kExitOk;
  }
  std::vector<PointJob> jobs;
  for (int id : missing) jobs.push_back(point_job(plan, id));
  run_points(jobs, o.jobs, o.progress);
  std::fputs(merge_results(plan).c_str(), stdout);
  draw_plots(plan.dir);
  return kExitOk;
}

}  // namespace

void add_sweep_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand(
      "sweep", "Run a scenario over node counts or other axes; one process per point, merged CSV");
  CLI::Option* scenario =
      sub->add_option("scenario", opts->scenario, "Scenario YAML file")->check(CLI::ExistingFile);
  CLI::Option* nodes = sub->add_option("--nodes", opts->nodes,
                                       "Node counts: a list '1,2,4' or a doubling range '1..4608'")
                           ->check(kNonEmpty);
  CLI::Option* axis = sub->add_option("--axis", opts->axes,
                                      "Another axis, KEY=V1,V2,... (e.g. "
                                      "allreduce.algorithm=ring,tree)")
                          ->take_all();
  CLI::Option* set =
      sub->add_option("--set", opts->overrides, "Override a scenario key for every point")
          ->take_all();
  sub->add_option("-o,--out", opts->out_dir,
                  "Output folder for points, per-point results and sweep.csv")
      ->check(kNonEmpty)
      ->capture_default_str();
  CLI::Option* jobs = sub->add_option("-j,--jobs", opts->jobs,
                                      "Points to run in parallel (default: number of cores)")
                          ->check(CLI::Range(0, 4096));
  CLI::Option* progress =
      sub->add_flag("--progress", opts->progress,
                    "Report points done on stderr even when it is not a terminal (on a terminal: "
                    "always)");
  CLI::Option* slurm =
      sub->add_flag("--slurm", opts->slurm,
                    "Plan only, and write Slurm scripts (a job array of the points, a merge job "
                    "after it) to OUT/slurm/; submit with OUT/slurm/submit.sh");
  CLI::Option* sbatch =
      sub->add_option("--sbatch", opts->sbatch,
                      "Extra sbatch argument for the Slurm scripts (repeatable, e.g. "
                      "--sbatch=--partition=batch)");
  CLI::Option* max_running =
      sub->add_option("--slurm-max-running", opts->slurm_max_running,
                      "At most this many array tasks at once (sbatch --array=...%N)")
          ->check(CLI::Range(0, 1000000));
  CLI::Option* run_task =
      sub->add_option("--run-task", opts->run_task,
                      "Run point ID of the sweep planned in --out (what an array task does)")
          ->check(CLI::Range(0, 2147483647));
  CLI::Option* merge =
      sub->add_flag("--merge", opts->merge,
                    "Merge the results of the sweep planned in --out into summaries and sweep.csv");
  CLI::Option* missing =
      sub->add_flag("--missing", opts->missing,
                    "Print the ids of the planned points without a result (a Slurm --array list)");
  // The folder modes are one each, and take the plan in --out as it is: one of them given with
  // another, or with what plans a sweep, had all but one silently dropped (exit 2 now). None
  // runs points in parallel (a task runs its one point, --merge and --missing none), so -j and
  // --progress with them were dropped too.
  run_task->excludes(merge)->excludes(missing);
  merge->excludes(missing);
  for (CLI::Option* mode : {run_task, merge, missing})
    for (CLI::Option* planning :
         {scenario, nodes, axis, set, slurm, sbatch, max_running, jobs, progress})
      mode->excludes(planning);
  sub->callback([opts, &action] { action = [opts]() -> int { return run_sweep(*opts); }; });
}

}  // namespace scalecast::cli
