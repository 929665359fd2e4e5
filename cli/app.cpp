// The scalecast command line as a function: what main() runs, and what a simulation server
// child (cmd_sim_server.cpp) runs without re-executing the binary.

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "cli/commands.hpp"
#include "cli/run_guard.hpp"
#include "common/config_error.hpp"
#include "common/logging.hpp"
#include "common/version.hpp"
#include "sim/simgrid_info.hpp"

namespace scalecast::cli {
namespace {

std::string version_text() {
  return fmt::format("scalecast {} (git {}, SimGrid {})", common::kVersion, common::kGitHash,
                     sim::simgrid_version());
}

}  // namespace

int run_main(int argc, char** argv) {
  CLI::App app{
      "scalecast predicts deep-learning training throughput, iteration time, scaling efficiency\n"
      "and where the time goes on GPU supercomputers, by replaying training steps on SimGrid.\n"
      "Exit codes: 0 success, 1 bad input, 2 bad command line, 4 other failure,\n"
      "130 interrupted (SIGINT/SIGTERM).",
      "scalecast"};
  app.require_subcommand(1);
  bool verbose = false;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "Log debug detail to stderr");
  app.add_flag("-q,--quiet", quiet, "Log only warnings and errors")->excludes("--verbose");
  app.set_version_flag("--version", version_text(), "Print the version and exit");
  Action action;
  add_run_command(app, action);
  add_sweep_command(app, action);
  add_calibrate_command(app, action);
  add_validate_command(app, action);
  add_compare_trace_command(app, action);
  add_describe_command(app, action);
  add_sim_server_command(app, action);

  try {
    app.parse(argc, argv);
    common::init_logging(verbose
                             ? common::Verbosity::kVerbose
                             : (quiet ? common::Verbosity::kQuiet : common::Verbosity::kNormal));
    const int rc = action ? action() : kExitUsage;
    // Tables and reports go to stdout: one that could not be written (a full disk, a closed
    // pipe) is a failed run, not a silent success.
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
      const int err = errno;
      std::fprintf(stderr, "scalecast: error: cannot write the standard output%s%s\n",
                   err != 0 ? ": " : "", err != 0 ? std::strerror(err) : "");
      return kExitFailure;
    }
    if (!interrupted()) return rc;
    std::fprintf(stderr, "scalecast: interrupted; finished results are kept\n");
    return kExitInterrupted;
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  } catch (const common::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitInputError;
  } catch (const Interrupted&) {
    std::fprintf(stderr, "scalecast: interrupted; finished results are kept\n");
    return kExitInterrupted;
  } catch (const ChildInputError& e) {
    std::fprintf(stderr, "%s\n", e.what());  // the point process's own located message
    return kExitInputError;
  } catch (const std::bad_alloc&) {
    // Not a message of its own ("std::bad_alloc"): say what ran out and what to change.
    std::fprintf(stderr,
                 "scalecast: error: out of memory: the inputs ask for more memory than this "
                 "machine has (try a smaller batch, model or machine)\n");
    return kExitFailure;
  } catch (const std::exception& e) {
    if (interrupted()) {  // a child killed by the interruption failed the run
      std::fprintf(stderr, "scalecast: interrupted; finished results are kept\n");
      return kExitInterrupted;
    }
    std::fprintf(stderr, "scalecast: error: %s\n", e.what());
    return kExitFailure;
  }
}

}  // namespace scalecast::cli
