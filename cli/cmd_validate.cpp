// `scalecast validate`: predict every point of a validation file and report the errors.

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "cli/run_guard.hpp"
#include "cli/scenario_inputs.hpp"
#include "common/config_error.hpp"
#include "validation/protocol.hpp"
#include "validation/report.hpp"
#include "validation/run_predictor.hpp"
#include "validation/statistics.hpp"
#include "validation/validation_file.hpp"

namespace scalecast::cli {
namespace {

struct ValidateOptions {
  std::string file;
  std::string json_out;
  std::string work_dir;
  int jobs = 2;
};

// The running executable, so each simulation is a child `scalecast run`.
std::string self_exe() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("scalecast") : p.string();
}

// Where the results go, checked before any simulation: a --json naming the validation file
// replaced the input with the JSON, a folder failed only after the whole run ("cannot rename
// into place"), and a --work-dir that is a file, or under one, made every point fail (exit 4).
void check_outputs(const ValidateOptions& o) {
  if (!o.json_out.empty()) check_output_file("--json", o.json_out, {o.file});
  if (!o.work_dir.empty()) validation::create_work_dir("--work-dir", o.work_dir);
}

int run_validate(const ValidateOptions& o) {
  install_interrupt_handlers();
  validation::ValidationFile file = validation::load_validation_file(o.file);
  // A point with no platform or model of its name is skipped with its reason (FORMAT.md 5.4);
  // the others still run.
  validation::mark_unsimulatable(file);
  validation::check_node_counts(file);  // a node count no machine can have: exit 1 here
  {  // every other point's platform, model and GPUs per node, before any simulation
    std::vector<std::string> systems, models;
    std::vector<int> gpus_per_node;
    for (const auto& p : file.points) {
      const bool skipped = !p.unsimulatable.empty();  // empty: not checked
      systems.push_back(skipped ? std::string() : p.system);
      models.push_back(skipped ? std::string() : p.model);
      gpus_per_node.push_back(p.nodes > 0 ? p.gpus_per_node() : 0);
    }
    preflight_validation_file(o.file, systems, models, gpus_per_node);
  }
  check_outputs(o);
  std::optional<OutputLock> lock;  // two validations writing one --json
  if (!o.json_out.empty()) lock.emplace(o.json_out, OutputLock::Kind::kFile, "--json");
  std::optional<TempDir> tmp;  // private, fresh, removed on exit and after Ctrl-C
  if (o.work_dir.empty()) tmp.emplace("validate");
  const std::string work = o.work_dir.empty() ? tmp->path() : o.work_dir;
  validation::RunPredictor predictor(self_exe(), work);
  validation::ProtocolOptions options;
  options.jobs = o.jobs;
  const validation::ValidationRun run = validation::run_protocol(file, predictor, options);
  // Simulations killed by Ctrl-C read as failed points: print and write nothing from them.
  throw_if_interrupted();
  const validation::RunSummary summary = validation::summarize(run);
  fmt::print("{}", validation::format_table(file, run, summary));
  if (!o.json_out.empty()) {
    validation::write_report_file("--json", o.json_out,
                                  validation::format_json(file, run, summary));
  }
  // One point's failure does not stop the others (the table and JSON list it as FAILED), but
  // the run did not do what was asked: say so in the exit status.
  if (const int failures = run.failures(); failures > 0) {
    spdlog::error("validate: {} simulation(s) failed unexpectedly (FAILED in the table)", failures);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void add_validate_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* sub = app.add_subcommand(
      "validate", "Predict each point of a validation file and report signed errors and MAPE");
  sub->add_option("file", opts->file, "Validation YAML file (format: validation/FORMAT.md)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--json", opts->json_out, "Also write the table and summary as JSON")
      ->check(kNonEmpty);
  sub->add_option("--work-dir", opts->work_dir,
                  "Keep each simulation's scenario and outputs in this folder")
      ->check(kNonEmpty);
  sub->add_option("--jobs,-j", opts->jobs, "Simulations run at once (each a child process)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  sub->callback([opts, &action] { action = [opts]() -> int { return run_validate(*opts); }; });
}

}  // namespace scalecast::cli
