// `scalecast sweep`: run a scenario over a grid of parameters, one process per point.

#include <memory>

#include "cli/commands.hpp"

namespace scalecast::cli {
namespace {

struct SweepOptions {
  std::string scenario;
  std::string nodes;
  std::vector<std::string> axes;
  std::string out_dir = "sweep";
  int jobs = 0;
};

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
  sub->add_option("-o,--out", opts->out_dir,
                  "Output folder for points, per-point results and sweep.csv")
      ->capture_default_str();
  sub->add_option("-j,--jobs", opts->jobs, "Points to run in parallel (default: number of cores)")
      ->check(CLI::NonNegativeNumber);
  sub->callback([opts, &action] {
    action = [opts]() -> int {
      throw NotBuilt("sweep: the replay engine is not built yet (issue 'Replay engine')");
    };
  });
}

}  // namespace scalecast::cli
