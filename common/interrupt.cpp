#include "common/interrupt.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>

namespace scalecast::common {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;
// Lock-free slots, so the signal handler reads them safely (0: free).
std::array<std::atomic<pid_t>, 4096> g_children{};

void on_signal(int) {
  g_interrupted = 1;
  for (auto& c : g_children) {
    const pid_t pid = c.load();
    if (pid > 0) ::kill(pid, SIGTERM);
  }
}

}  // namespace

void install_interrupt_handlers() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // no SA_RESTART: waitpid returns EINTR; a second signal kills
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return g_interrupted != 0; }

void throw_if_interrupted() {
  if (interrupted()) throw Interrupted();
}

void register_child(pid_t pid) {
  for (auto& c : g_children) {
    pid_t free = 0;
    if (c.compare_exchange_strong(free, pid)) break;
  }
  if (interrupted()) ::kill(pid, SIGTERM);  // started while the handler ran
}

void unregister_child(pid_t pid) {
  for (auto& c : g_children) {
    pid_t mine = pid;
    if (c.compare_exchange_strong(mine, 0)) return;
  }
}

int exit_code_of(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

std::string describe_child_exit(int rc) {
  // 128 + N is how exit_code_of reports a signal; a status above 128 + SIGRTMAX (255, say) can
  // only have been a process's own exit code.
  if (rc <= 128 || rc - 128 > SIGRTMAX) return fmt::format("exited {}", rc);
  const int sig = rc - 128;
  const char* name = ::sigabbrev_np(sig);  // glibc >= 2.32: "KILL", "SEGV"; null if unnamed
  std::string out = name != nullptr ? fmt::format("was killed by signal {} (SIG{})", sig, name)
                                    : fmt::format("was killed by signal {}", sig);
  if (sig == SIGKILL)
    out +=
        ": no message of its own; usually the kernel's out-of-memory killer (the point may "
        "need more memory than this machine has) or a job's time or memory limit";
  return out;
}

}  // namespace scalecast::common
