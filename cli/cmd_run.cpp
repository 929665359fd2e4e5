// `scalecast run`: simulate one scenario (or each node count of a list, each in its own process).

#include <memory>

#include "cli/commands.hpp"

namespace scalecast::cli {
namespace {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string out_dir;
  int jobs = 0;
};

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run", "Simulate a scenario: throughput, iteration time, scaling efficiency, breakdown");
  sub->add_option("scenario", opts->scenario, "Scenario YAML file (see scenarios/README.md)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--set", opts->overrides,
                  "Override a scenario key, e.g. --set nodes=4608 --set allreduce.algorithm=ring")
      ->take_all();
  sub->add_option("-o,--out", opts->out_dir,
                  "Write summary.json, iterations.csv, ops.csv, trace.json and the resolved "
                  "scenario to this folder");
  sub->add_option("-j,--jobs", opts->jobs,
                  "Processes to run in parallel when the scenario lists several node counts "
                  "(default: number of cores)")
      ->check(CLI::NonNegativeNumber);
  sub->callback([opts, &action] {
    action = [opts]() -> int {
      throw NotBuilt("run: the replay engine is not built yet (issue 'Replay engine')");
    };
  });
}

}  // namespace scalecast::cli
