#pragma once
// The scalecast subcommands. Each file cmd_<name>.cpp registers one subcommand on the CLI11 app:
// its options, its --help text and the action that runs when it is chosen. Actions throw
// ConfigError for bad input; main() turns it (and any other exception) into a message on stderr
// and a non-zero exit code.

#include <CLI/CLI.hpp>
#include <functional>
#include <stdexcept>
#include <string>

namespace scalecast::cli {

// Exit codes, documented in `scalecast --help`.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInputError = 1;  // bad input file or option value (ConfigError)
inline constexpr int kExitUsage = 2;       // command-line syntax (CLI11)
inline constexpr int kExitFailure = 4;     // anything else went wrong (3 is not used)

// An option given an empty value ("-o ''", "--nodes ''") is a command-line error, not the
// option left out: the user asked for something and would otherwise silently get the default.
inline const CLI::Validator kNonEmpty(
    [](const std::string& value) {
      return value.empty() ? std::string("must not be empty") : std::string();
    },
    "NONEMPTY", "NonEmpty");

// What the chosen subcommand does; set by its parse callback, run by main() after logging is set
// up. Returns the exit code.
using Action = std::function<int()>;

void add_run_command(CLI::App& app, Action& action);
void add_sweep_command(CLI::App& app, Action& action);
void add_calibrate_command(CLI::App& app, Action& action);
void add_validate_command(CLI::App& app, Action& action);
void add_compare_trace_command(CLI::App& app, Action& action);
void add_describe_command(CLI::App& app, Action& action);
void add_sim_server_command(CLI::App& app, Action& action);

// The whole command line (parse, logging, action, errors to exit codes): main() is this, and a
// simulation server's child runs it in place of a fresh `scalecast` process.
int run_main(int argc, char** argv);

}  // namespace scalecast::cli
