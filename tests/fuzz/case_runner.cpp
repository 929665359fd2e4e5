#include "tests/fuzz/case_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <thread>
#include <typeinfo>

#include "common/config_error.hpp"

namespace scalecast::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxMessage = 4096;

void write_all(int fd, const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      _exit(97);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Record: 'S' (case started) or 'R' (case result), index, outcome, message length, message.
void send(int fd, char type, std::uint64_t index, Outcome outcome, std::string message) {
  if (message.size() > kMaxMessage) message.resize(kMaxMessage);
  const auto o = static_cast<std::uint8_t>(outcome);
  const auto len = static_cast<std::uint32_t>(message.size());
  std::string rec(1, type);
  rec.append(reinterpret_cast<const char*>(&index), sizeof index);
  rec.append(reinterpret_cast<const char*>(&o), sizeof o);
  rec.append(reinterpret_cast<const char*>(&len), sizeof len);
  rec += message;
  write_all(fd, rec.data(), rec.size());
}

constexpr std::size_t kHeader = 1 + sizeof(std::uint64_t) + 1 + sizeof(std::uint32_t);

[[noreturn]] void child_loop(int fd, std::size_t first, std::size_t count,
                             const std::function<void(std::size_t)>& run_case) {
  // The test framework's crash handlers would report the child's crash as the test's own.
  for (int sig : {SIGABRT, SIGSEGV, SIGFPE, SIGILL, SIGBUS, SIGTERM}) ::signal(sig, SIG_DFL);
  for (std::size_t i = first; i < count; ++i) {
    send(fd, 'S', i, Outcome::kSuccess, "");
    try {
      run_case(i);
      send(fd, 'R', i, Outcome::kSuccess, "");
    } catch (const common::ConfigError& e) {
      send(fd, 'R', i, Outcome::kConfigError, e.what());
    } catch (const std::exception& e) {
      send(fd, 'R', i, Outcome::kOtherError, std::string(typeid(e).name()) + ": " + e.what());
    } catch (...) {
      send(fd, 'R', i, Outcome::kOtherError, "an exception of unknown type");
    }
  }
  ::close(fd);
  _exit(0);
}

std::string status_text(int status) {
  if (WIFSIGNALED(status))
    return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

}  // namespace

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::kSuccess:
      return "success";
    case Outcome::kConfigError:
      return "ConfigError";
    case Outcome::kOtherError:
      return "other exception";
    case Outcome::kCrash:
      return "crash";
    case Outcome::kTimeout:
      return "timeout";
  }
  return "?";
}

std::vector<CaseResult> run_isolated(std::size_t count, double case_timeout_s,
                                     const std::function<void(std::size_t)>& run_case) {
  std::vector<CaseResult> results(count);
  std::size_t next = 0;
  while (next < count) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      ::close(fds[0]);
      child_loop(fds[1], next, count, run_case);
    }
    ::close(fds[1]);
    std::string buffer;
    long current = -1;
    auto deadline = Clock::now() + std::chrono::duration<double>(case_timeout_s);
    bool timed_out = false;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p{fds[0], POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::max<long>(0, left.count())));
      if (r == 0 && current >= 0) {
        timed_out = true;
        break;
      }
      if (r == 0) {  // between cases: the child is slow to start the next one
        deadline = Clock::now() + std::chrono::duration<double>(case_timeout_s);
        continue;
      }
      if (r < 0) {
        if (errno == EINTR) continue;
        break;
      }
      char chunk[65536];
      const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // end of file: the child is gone
      buffer.append(chunk, static_cast<std::size_t>(n));
      while (buffer.size() >= kHeader) {
        std::uint64_t index = 0;
        std::uint8_t outcome = 0;
        std::uint32_t len = 0;
        std::memcpy(&index, buffer.data() + 1, sizeof index);
        std::memcpy(&outcome, buffer.data() + 1 + sizeof index, 1);
        std::memcpy(&len, buffer.data() + 2 + sizeof index, sizeof len);
        if (buffer.size() < kHeader + len) break;
        if (buffer[0] == 'S') {
          current = static_cast<long>(index);
          deadline = Clock::now() + std::chrono::duration<double>(case_timeout_s);
        } else {
          results[index] = {static_cast<Outcome>(outcome), buffer.substr(kHeader, len)};
          current = -1;
          next = index + 1;
        }
        buffer.erase(0, kHeader + len);
      }
    }
    if (timed_out) ::kill(pid, SIGKILL);
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
      results[static_cast<std::size_t>(current)] = {
          Outcome::kTimeout, "no result after " + std::to_string(case_timeout_s) + " s"};
      next = static_cast<std::size_t>(current) + 1;
    } else if (current >= 0) {
      results[static_cast<std::size_t>(current)] = {Outcome::kCrash, status_text(status)};
      next = static_cast<std::size_t>(current) + 1;
    } else if (next < count) {
      // The child ended between cases without a crash in one: should not happen.
      results[next] = {Outcome::kCrash, "child ended between cases: " + status_text(status)};
      ++next;
    }
  }
  return results;
}

CommandResult run_command(const std::vector<std::string>& argv, const std::string& cwd,
                          double timeout_s) {
  // Everything the child needs is allocated before fork(): the test may run cases on several
  // threads, and a child of a threaded process may only make async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    ::close(fds[0]);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    if (::chdir(cwd.c_str()) != 0) _exit(98);
    ::execv(args[0], args.data());
    _exit(99);
  }
  ::setpgid(pid, pid);
  ::close(fds[1]);
  CommandResult result;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    // The head: the error line comes first, and may be long (it quotes the bad value).
    if (result.stderr_text.size() < 256 * 1024)
      result.stderr_text.append(chunk, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  // stderr closed: wait for the exit, still within the time limit.
  while (!result.timed_out) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (Clock::now() >= deadline)
      result.timed_out = true;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (result.timed_out) {
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return result;
  }
  ::kill(-pid, SIGKILL);  // leftovers of its process group, if any
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

bool is_located(const std::string& message) {
  // By hand, not std::regex: its recursion overflows the stack on 100,000-character lines.
  const auto digits_before = [&](std::size_t end, std::size_t& start) {
    start = end;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(message[start - 1]))) --start;
    return start < end && message[start] != '0';
  };
  for (std::size_t at = message.find(": error: "); at != std::string::npos;
       at = message.find(": error: ", at + 1)) {
    std::size_t col = 0, line = 0;
    if (!digits_before(at, col) || col == 0 || message[col - 1] != ':') continue;
    if (!digits_before(col - 1, line) || line == 0 || message[line - 1] != ':') continue;
    const std::size_t bol = message.rfind('\n', line - 1);
    const std::size_t file_start = bol == std::string::npos ? 0 : bol + 1;
    if (line - 1 > file_start) return true;  // a non-empty file name
  }
  return false;
}

}  // namespace scalecast::fuzz
