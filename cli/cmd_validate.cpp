// `scalecast validate`: predict every point of a validation file and report the errors.

#include <memory>

#include "cli/commands.hpp"

namespace scalecast::cli {
namespace {

struct ValidateOptions {
  std::string file;
  std::string json_out;
};

}  // namespace

void add_validate_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ValidateOptions>();
  CLI::App* sub = app.add_subcommand(
      "validate", "Predict each point of a validation file and report signed errors and MAPE");
  sub->add_option("file", opts->file, "Validation YAML file (format: validation/README.md)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--json", opts->json_out, "Also write the table and summary as JSON");
  sub->callback([opts, &action] {
    action = [opts]() -> int {
      throw NotBuilt("validate: validation is not built yet (issue 'Validation')");
    };
  });
}

}  // namespace scalecast::cli
