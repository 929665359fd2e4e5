// `scalecast compare-trace`: measured profiler trace versus simulation, per category.

#include <memory>

#include "cli/commands.hpp"

namespace scalecast::cli {
namespace {

struct CompareTraceOptions {
  std::string trace;
  std::string scenario;
  std::string format = "auto";
};

}  // namespace

void add_compare_trace_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<CompareTraceOptions>();
  CLI::App* sub = app.add_subcommand(
      "compare-trace", "Compare a measured trace with the simulation of a scenario, per category");
  sub->add_option("trace", opts->trace,
                  "Measured trace (Chrome/Kineto JSON, Horovod timeline, nsys SQLite)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--scenario", opts->scenario, "Scenario to simulate")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--format", opts->format, "Trace format")
      ->check(CLI::IsMember({"auto", "chrome", "kineto", "horovod", "nsys"}))
      ->capture_default_str();
  sub->callback([opts, &action] {
    action = [opts]() -> int {
      throw NotBuilt("compare-trace: trace ingestion is not built yet (issue 'Validation')");
    };
  });
}

}  // namespace scalecast::cli
