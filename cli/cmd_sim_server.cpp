// `scalecast sim-server` (hidden): a zygote for simulations. Each simulation still runs in its own
// process (SimGrid allows one engine per process), but that process is fork()ed from this
// already-started one instead of a fresh `scalecast`: loading the shared libraries (cuBLAS and
// cuDNN initialise for hundreds of ms even when no GPU is used) and parsing the calibration
// databases (--preload) happen once per server instead of once per simulation. The child runs
// exactly the command line a fresh process would (run_main), so its results are the same bytes.
//
// Protocol on stdin/stdout (a socket or pipes), one request at a time:
//   request: the output file path (the child's stdout and stderr, like `2>&1`), a line with the
//            argument count N, then N lines, one argument each (argv[0] included);
//   reply:   one line with the child's exit status (128 + signal when it was killed).
// The server exits when stdin closes. Client: validation/sim_server.hpp.

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/database_cache.hpp"
#include "common/interrupt.hpp"
#include "common/logging.hpp"

namespace scalecast::cli {
namespace {

struct ServerOptions {
  std::vector<std::string> preload;
};

// Line reader on a raw file descriptor: no stdio buffer for a forked child to inherit.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  bool next(std::string& line) {
    for (;;) {
      const auto end = buffer_.find('\n');
      if (end != std::string::npos) {
        line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return true;
      }
      char chunk[4096];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n <= 0) return false;  // closed (or failed): the client is gone
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buffer_;
};

bool read_request(LineReader& in, std::string& out_path, std::vector<std::string>& args) {
  std::string count;
  if (!in.next(out_path) || !in.next(count)) return false;
  const long n = std::strtol(count.c_str(), nullptr, 10);
  if (n <= 0 || n > 4096) return false;
  args.assign(static_cast<std::size_t>(n), {});
  for (std::string& a : args) {
    if (!in.next(a)) return false;
  }
  return true;
}

[[noreturn]] void run_child(const std::string& out_path, std::vector<std::string> args) {
  // Dies with the server: when validate is interrupted it kills its servers (common/
  // interrupt.hpp), and a simulation left behind would run on for nothing.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int null = ::open("/dev/null", O_RDONLY);
  if (out < 0 || null < 0) ::_exit(kExitFailure);
  ::dup2(null, STDIN_FILENO);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(out, STDERR_FILENO);
  ::close(out);
  ::close(null);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = run_main(static_cast<int>(args.size()), argv.data());
  std::fflush(nullptr);
  ::_exit(rc);
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

int serve(const ServerOptions& o) {
  for (const std::string& path : o.preload) {
    try {
      cached_database(path);
    } catch (const std::exception& e) {
      // Not fatal: the simulation that names this database reports it as it always would.
      spdlog::warn("sim-server: not preloaded: {}", e.what());
    }
  }
  std::fflush(nullptr);  // nothing buffered for the children to inherit
  LineReader in(STDIN_FILENO);
  std::string out_path;
  std::vector<std::string> args;
  while (read_request(in, out_path, args)) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      if (!write_all(STDOUT_FILENO, "-1\n")) break;
      continue;
    }
    if (pid == 0) run_child(out_path, args);
    int status = 0;
    pid_t waited;
    while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (waited < 0) status = W_EXITCODE(kExitFailure, 0);
    const int rc = common::exit_code_of(status);
    if (!write_all(STDOUT_FILENO, std::to_string(rc) + "\n")) break;
  }
  return kExitOk;
}

}  // namespace

void add_sim_server_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ServerOptions>();
  CLI::App* sub = app.add_subcommand(
      "sim-server", "Internal: fork each requested command line from one started process");
  sub->group("");  // internal, not listed in --help
  sub->add_option("--preload", opts->preload, "Calibration database to parse once up front");
  sub->callback([opts, &action] { action = [opts]() -> int { return serve(*opts); }; });
}

}  // namespace scalecast::cli
