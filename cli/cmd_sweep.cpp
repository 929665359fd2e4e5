// `scalecast sweep`: run a scenario over a grid of parameters, one process per point.

#include <fmt/format.h>

#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/point_runner.hpp"
#include "common/atomic_file.hpp"
#include "common/config_error.hpp"
#include "sim/outputs.hpp"
#include "sim/scenario.hpp"

namespace scalecast::cli {
namespace {

struct SweepOptions {
  std::string scenario;
  std::string nodes;
  std::vector<std::string> axes;
  std::vector<std::string> overrides;
  std::string out_dir = "sweep";
  int jobs = 0;
};

// "1,2,4" or "1..4608" (doubling from the first, plus the last).
std::vector<int> parse_nodes(const std::string& text) {
  std::vector<int> out;
  const auto bad = [&] {
    return common::ConfigError("--nodes", 0, 0, text,
                               "expected a list like 1,2,4 or a doubling range like 1..4608");
  };
  try {
    const auto dots = text.find("..");
    if (dots != std::string::npos) {
      const int lo = std::stoi(text.substr(0, dots)), hi = std::stoi(text.substr(dots + 2));
      if (lo < 1 || hi < lo) throw bad();
      for (long n = lo; n <= hi; n *= 2) out.push_back(static_cast<int>(n));
      if (out.back() != hi) out.push_back(hi);
    } else {
      std::stringstream ss(text);
      for (std::string item; std::getline(ss, item, ',');) {
        const int n = std::stoi(item);
        if (n < 1) throw bad();
        out.push_back(n);
      }
    }
  } catch (const std::logic_error&) {
    throw bad();
  }
  if (out.empty()) throw bad();
  return out;
}

int run_sweep(const SweepOptions& o) {
  // Axis combinations: the cartesian product of every --axis KEY=V1,V2.
  std::vector<std::vector<std::string>> combos = {{}};
  std::vector<std::string> keys;
  for (const std::string& axis : o.axes) {
    const auto eq = axis.find('=');
    if (eq == std::string::npos)
      throw common::ConfigError("--axis", 0, 0, axis, "expected KEY=V1,V2");
    keys.push_back(axis.substr(0, eq));
    std::vector<std::vector<std::string>> next;
    std::stringstream ss(axis.substr(eq + 1));
    std::vector<std::string> values;
    for (std::string v; std::getline(ss, v, ',');) values.push_back(v);
    for (const auto& c : combos)
      for (const std::string& v : values) {
        auto n = c;
        n.push_back(keys.back() + "=" + v);
        next.push_back(n);
      }
    combos = next;
  }
  const sim::Scenario base = sim::load_scenario(o.scenario, sim::parse_overrides(o.overrides));
  const std::vector<int> nodes = o.nodes.empty() ? base.nodes : parse_nodes(o.nodes);
  std::ostringstream csv;
  for (const std::string& k : keys) csv << k << ',';
  csv << "nodes,gpus,iteration_time_s,throughput_samples_per_s,efficiency_vs_1_gpu,"
         "efficiency_vs_1_node,compute_s,exposed_comm_s,io_stall_s,copy_s,idle_s,fidelity\n";
  for (std::size_t c = 0; c < combos.size(); ++c) {
    std::vector<std::string> sets = o.overrides;
    sets.insert(sets.end(), combos[c].begin(), combos[c].end());
    const sim::Scenario s = sim::load_scenario(o.scenario, sim::parse_overrides(sets));
    const std::string dir =
        o.out_dir + "/" + (combos.size() > 1 ? fmt::format("combo-{}", c) : "points");
    const auto points = run_with_baselines(o.scenario, sets, nodes, dir, o.jobs);
    std::fputs(sim::format_table(s, points).c_str(), stdout);
    sim::write_summary(dir, s, points);
    for (const auto& p : points) {
      for (const std::string& kv : combos[c]) csv << kv.substr(kv.find('=') + 1) << ',';
      const auto eff = [&](const char* k) {
        const auto& v = p["scaling_efficiency"][k];
        return v.is_null() ? std::string() : fmt::format("{:.9g}", v.get<double>());
      };
      const auto& b = p["breakdown"];
      csv << p["nodes"].get<int>() << ',' << p["gpus"].get<int>() << ','
          << fmt::format("{:.9g},{:.9g},", p["iteration_time_s"].get<double>(),
                         p["throughput_samples_per_s"].get<double>())
          << eff("vs_1_gpu") << ',' << eff("vs_1_node") << ','
          << fmt::format("{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},", b["compute_s"].get<double>(),
                         b["exposed_comm_s"].get<double>(), b["io_stall_s"].get<double>(),
                         b["copy_s"].get<double>(), b["idle_s"].get<double>())
          << p["fidelity"].get<std::string>() << '\n';
    }
  }
  common::write_file_atomic(o.out_dir + "/sweep.csv", csv.str());
  return kExitOk;
}

}  // namespace

void add_sweep_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand(
      "sweep", "Run a scenario over node counts or other axes; one process per point, merged CSV");
  sub->add_option("scenario", opts->scenario, "Scenario YAML file")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--nodes", opts->nodes,
                  "Node counts: a list '1,2,4' or a doubling range '1..4608'");
  sub->add_option("--axis", opts->axes,
                  "Another axis, KEY=V1,V2,... (e.g. allreduce.algorithm=ring,tree)")
      ->take_all();
  sub->add_option("--set", opts->overrides, "Override a scenario key for every point")->take_all();
  sub->add_option("-o,--out", opts->out_dir,
                  "Output folder for points, per-point results and sweep.csv")
      ->capture_default_str();
  sub->add_option("-j,--jobs", opts->jobs, "Points to run in parallel (default: number of cores)")
      ->check(CLI::NonNegativeNumber);
  sub->callback([opts, &action] { action = [opts]() -> int { return run_sweep(*opts); }; });
}

}  // namespace scalecast::cli
