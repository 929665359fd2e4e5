// `scalecast compare-trace`: measured profiler trace versus simulation, per category.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "cli/run_guard.hpp"
#include "cli/scenario_inputs.hpp"
#include "common/atomic_file.hpp"
#include "common/config_error.hpp"
#include "sim/cluster.hpp"
#include "validation/run_predictor.hpp"
#include "validation/trace_comparison.hpp"
#include "validation/trace_metrics.hpp"
#include "validation/trace_reader.hpp"

namespace scalecast::cli {
namespace {

struct CompareTraceOptions {
  std::string trace;
  std::string scenario;
  std::string format = "auto";
  std::vector<std::string> rules;
  std::string device;
  int warmup = -1;
  std::string json_out;
};

// --rule is checked as the command line is parsed (exit 2): an unknown class, an empty pattern
// or a regular expression that does not compile.
const CLI::Validator kRuleValidator(
    [](const std::string& value) {
      try {
        validation::EventClassifier::parse_rule(value);
      } catch (const std::invalid_argument& e) {
        return std::string(e.what());
      }
      return std::string();
    },
    "RULE", "ClassificationRule");

// --warmup: a whole number of iterations from 0; a negative one used to mean the default.
const CLI::Validator kWarmupValidator(
    [](const std::string& value) {
      int v = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size() || v < 0) {
        return fmt::format("expected a whole number of iterations >= 0, got \"{}\"", value);
      }
      return std::string();
    },
    "N>=0", "Warmup");

std::string self_exe() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("scalecast") : p.string();
}

int run_compare(const CompareTraceOptions& o) {
  validation::TraceReadOptions read;
  read.format = validation::parse_trace_format(o.format);
  std::vector<validation::ClassRule> rules;
  for (const std::string& r : o.rules) rules.push_back(validation::EventClassifier::parse_rule(r));
  read.classifier = validation::EventClassifier(rules);
  validation::Trace measured = validation::read_trace(o.trace, read);
  if (!o.device.empty()) {
    const std::vector<std::string> devices = validation::trace_devices(measured);
    if (std::find(devices.begin(), devices.end(), o.device) == devices.end()) {
      throw common::ConfigError(
          "--device", 0, 0, "",
          devices.empty() ? fmt::format("no device \"{}\" in {}: the trace has no device events",
                                        o.device, o.trace)
                          : fmt::format("no device \"{}\" in {} (expected one of: {})", o.device,
                                        o.trace, fmt::join(devices, ", ")));
    }
  }
  validation::TraceMetricsOptions mopt;
  mopt.device = o.device;
  mopt.warmup = o.warmup;
  const validation::TraceMetrics m = validation::compute_metrics(measured, read.classifier, mopt);

  // The scenario, its platform, model and calibration databases and its node count are checked
  // before anything is simulated (exit 1 at the key), as run does; the trace's own errors come
  // first.
  const sim::Scenario scenario = preflight(o.scenario, {});
  sim::check_node_counts(scenario, scenario.nodes);
  // The simulated trace holds the scenario's warm-up and measured iterations; a --warmup that
  // skips them all would leave nothing to compare, found only after the simulation.
  const int simulated_iterations = scenario.warmup + scenario.iterations;
  if (o.warmup >= simulated_iterations) {
    throw common::ConfigError(
        "--warmup", 0, 0, "",
        fmt::format("{} leaves no steady iteration of the simulation: {} simulates {} "
                    "iteration{} (warmup {} + iterations {}); raise its iterations or lower "
                    "--warmup",
                    o.warmup, o.scenario, simulated_iterations,
                    simulated_iterations == 1 ? "" : "s", scenario.warmup, scenario.iterations));
  }
  if (!o.json_out.empty()) {
    std::vector<std::string> inputs{o.trace};
    for (const InputFile& f : scenario_input_files(o.scenario, {})) inputs.push_back(f.path);
    check_output_file("--json", o.json_out, inputs);
  }
  install_interrupt_handlers();
  const TempDir work("compare");  // private, fresh, removed on exit and after Ctrl-C
  validation::RunScenarioSimulator simulator(self_exe(), work.path(), read);
  validation::Trace simulated = simulator.simulate(o.scenario);
  validation::TraceMetricsOptions sopt;
  sopt.warmup = o.warmup;
  const validation::TraceMetrics s = validation::compute_metrics(simulated, read.classifier, sopt);

  const validation::TraceComparison c = validation::compare_metrics(m, s);
  fmt::print("{}", validation::format_comparison(c, m, s));
  if (!o.json_out.empty()) common::write_file_atomic(o.json_out, validation::comparison_json(c));
  return kExitOk;
}

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
  sub->add_option("--rule", opts->rules,
                  "Extra classification rule, tried before the defaults: "
                  "[name:|cat:|stream:]REGEX=compute|comm|memcpy|other (repeatable)")
      ->check(kRuleValidator);
  sub->add_option("--device", opts->device,
                  "Device (pid) of the measured trace to compare; default: the busiest")
      ->check(kNonEmpty);
  sub->add_option("--warmup", opts->warmup,
                  "Iterations skipped at the start (default: 1 when there are 3 or more)")
      ->check(kWarmupValidator);
  sub->add_option("--json", opts->json_out, "Also write the comparison as JSON")->check(kNonEmpty);
  sub->callback([opts, &action] { action = [opts]() -> int { return run_compare(*opts); }; });
}

}  // namespace scalecast::cli
