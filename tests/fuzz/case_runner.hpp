#pragma once
// Runs fuzz cases where a crash, an abort or a hang of one case is a reported outcome instead of
// the end of the test: run_isolated() runs cases in a forked child process (a batch per child,
// restarted after the case that killed it) with a time limit per case; run_command() runs one
// external command with a time limit, capturing its exit status and stderr.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace scalecast::fuzz {

enum class Outcome {
  kSuccess,      // the case returned normally
  kConfigError,  // it threw common::ConfigError (message in `message`)
  kOtherError,   // it threw anything else (type and message in `message`)
  kCrash,        // the process died on a signal or exited mid-case
  kTimeout,      // it ran past the time limit
};

const char* to_string(Outcome o);

struct CaseResult {
  Outcome outcome = Outcome::kSuccess;
  std::string message;
};

// Runs case(i) for i in [0, count) in child processes; each case may take at most
// `case_timeout_s` seconds. Returns one result per case, in order.
std::vector<CaseResult> run_isolated(std::size_t count, double case_timeout_s,
                                     const std::function<void(std::size_t)>& run_case);

struct CommandResult {
  int exit_code = -1;  // the exit status when it exited, else -1
  int signal = 0;      // the signal that ended it, else 0
  bool timed_out = false;
  std::string stderr_text;  // the first 256 KiB or so
};

// Runs argv[0] with arguments argv[1..] in `cwd`, stdout to /dev/null; kills it (SIGKILL to its
// process group) after `timeout_s` seconds.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& cwd,
                          double timeout_s);

// True when `message` is a located error: "FILE:LINE:COL: error: ..." with LINE, COL >= 1.
bool is_located(const std::string& message);

}  // namespace scalecast::fuzz
