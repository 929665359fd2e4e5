#include "validation/sim_server.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "common/interrupt.hpp"
#include "common/simulation_environment.hpp"

namespace scalecast::validation {

SimServer::SimServer(const std::string& exe, const std::vector<std::string>& preload,
                     const std::string& log_path) {
  int fds[2];
  // Close-on-exec on both ends: a server started later by another thread must not hold this
  // one's connection open (the server stops when its end reads end-of-file).
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw SimServerError("cannot create a socket pair for the simulation server");
  }
  std::vector<std::string> args = {exe, "-q", "sim-server"};
  for (const std::string& db : preload) args.insert(args.end(), {"--preload", db});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int rc = common::spawn_simulation(&pid_, exe, &actions, argv.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    pid_ = -1;
    throw SimServerError("cannot start " + exe + " sim-server");
  }
  common::register_child(pid_);  // killed with its simulation on SIGINT/SIGTERM
  fd_ = fds[0];
}

SimServer::~SimServer() {
  if (fd_ >= 0) ::close(fd_);
  if (pid_ > 0) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    common::unregister_child(pid_);
  }
}

int SimServer::run(const std::vector<std::string>& argv, const std::string& output_path) {
  if (fd_ < 0) throw SimServerError("the simulation server is not running");
  std::string request = output_path + "\n" + std::to_string(argv.size()) + "\n";
  for (const std::string& a : argv) {
    if (a.find('\n') != std::string::npos || output_path.find('\n') != std::string::npos) {
      throw SimServerError("an argument holds a newline");
    }
    request += a + "\n";
  }
  for (std::size_t done = 0; done < request.size();) {
    // MSG_NOSIGNAL: a dead server is an error here, not a SIGPIPE for the whole process.
    const ssize_t n = ::send(fd_, request.data() + done, request.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw SimServerError("the simulation server stopped (request not sent)");
    done += static_cast<std::size_t>(n);
  }
  for (;;) {
    const auto end = pending_.find('\n');
    if (end != std::string::npos) {
      const std::string line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      const int rc = std::atoi(line.c_str());
      if (rc < 0) throw SimServerError("the simulation server could not fork");
      return rc;
    }
    char chunk[256];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw SimServerError("the simulation server stopped (no reply)");
    pending_.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace scalecast::validation
