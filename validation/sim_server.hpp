#pragma once
// Client of `scalecast sim-server` (cli/cmd_sim_server.cpp): a started scalecast process that
// fork()s one child per requested command line, so a simulation costs its own work and not the
// executable's start-up (shared-library initialisation, calibration databases parsed again).
// Each simulation is still its own process with its own SimGrid engine; the child runs the same
// command line code as a fresh process, so outputs are byte-identical. One request at a time.

#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace scalecast::validation {

// The server could not be started or stopped answering (the caller may fall back to a fresh
// process per simulation).
class SimServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SimServer {
 public:
  // Starts `scalecast_exe sim-server --preload DB ...`; its own log goes to `log_path`.
  SimServer(const std::string& scalecast_exe, const std::vector<std::string>& preload,
            const std::string& log_path);
  ~SimServer();  // closes the connection and waits for the server to exit
  SimServer(const SimServer&) = delete;
  SimServer& operator=(const SimServer&) = delete;

  // Runs `argv` (argv[0] included, no newlines in any argument) in a forked child whose stdout
  // and stderr go to `output_path`; returns its exit status (128 + signal when killed).
  int run(const std::vector<std::string>& argv, const std::string& output_path);

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;  // our end of the socket pair
  std::string pending_;
};

}  // namespace scalecast::validation
