#pragma once
// Interruption (SIGINT/SIGTERM) for every layer that starts processes: a flag the work loops
// check, and the child processes the handler kills (SIGTERM) when it arrives. Installed by the
// commands (cli/run_guard.hpp); the validation layer registers its simulation servers here too,
// so `validate` stops promptly on SIGTERM as on Ctrl-C.

#include <sys/types.h>

#include <stdexcept>
#include <string>

namespace scalecast::common {

// Thrown where a process notices an interruption; the CLI turns it into exit 130.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

// Installs the SIGINT/SIGTERM handlers (once per process; a second signal kills at once).
void install_interrupt_handlers();
// True once SIGINT or SIGTERM arrived.
bool interrupted();
// Throws Interrupted when interrupted().
void throw_if_interrupted();
// Child processes the handler kills (SIGTERM) when the process is interrupted.
void register_child(pid_t pid);
void unregister_child(pid_t pid);

// A waitpid() status as an exit code: the child's own, or 128 + the signal that killed it (the
// shell's convention; run_process, the simulation server and the point runner report it so).
int exit_code_of(int wait_status);

// How a failed child ended, from its status as run_process and the simulation server report it
// (128 + the signal when killed): "exited 4", "was killed by signal 6 (SIGABRT)". A child killed
// by SIGKILL leaves no message of its own (the kernel's out-of-memory killer or a resource
// limit), so the text says what usually sends it.
std::string describe_child_exit(int rc);

}  // namespace scalecast::common
