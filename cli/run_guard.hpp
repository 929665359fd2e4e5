#pragma once
// What keeps a scalecast run from damaging anything but its own results: private temporary
// folders (mkdtemp under $TMPDIR, else /tmp; removed on exit, also after Ctrl-C), an exclusive
// lock on an output folder (two runs into one --out would mix their files), and interruption:
// SIGINT/SIGTERM kill the point processes, unwind (temporary folders removed, locks released,
// finished results kept: each is written atomically) and exit 130.

#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/interrupt.hpp"

namespace scalecast::cli {

// Exit status after SIGINT/SIGTERM (128 + SIGINT, what shells report for Ctrl-C).
inline constexpr int kExitInterrupted = 130;

// Interruption lives in common/interrupt.hpp (the validation layer registers its processes too).
using common::install_interrupt_handlers;
using common::Interrupted;
using common::interrupted;
using common::register_child;
using common::throw_if_interrupted;
using common::unregister_child;

// A point process failed on bad input (exit 1): its message, so the parent exits 1 too.
class ChildInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A fresh private folder "$TMPDIR/scalecast-<tag>-XXXXXX" (mode 0700, mkdtemp: never an existing
// path, so a planted symlink cannot redirect it); removed with its contents on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& tag);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An exclusive, non-blocking flock held for the object's life, then its lock file is removed:
// on `target`/.lock for an output folder (created if missing), on `target`.lock for an output
// file. Another holder: common::ConfigError "TARGET is in use by pid N (another scalecast run
// writes there); wait for it to finish or give another --out".
// An output file named on the command line (`option` = --json), checked before any work: not
// a folder, in a folder that exists, and not one of `inputs` (a validation file, a trace, a
// scenario: writing the results there replaced the input). Throws common::ConfigError.
void check_output_file(const std::string& option, const std::string& path,
                       const std::vector<std::string>& inputs);

class OutputLock {
 public:
  enum class Kind { kFolder, kFile };
  // `option` names the command-line option of `target` in errors (--out, --json).
  explicit OutputLock(const std::string& target, Kind kind = Kind::kFolder,
                      const std::string& option = "--out");
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace scalecast::cli
