#include "cli/run_guard.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/config_error.hpp"

namespace scalecast::cli {

TempDir::TempDir(const std::string& tag) {
  const char* env = std::getenv("TMPDIR");
  std::string base = env != nullptr && *env != '\0' ? env : "/tmp";
  std::error_code ec;
  if (!std::filesystem::is_directory(base, ec)) base = "/tmp";
  std::string pattern = fmt::format("{}/scalecast-{}-XXXXXX", base, tag);
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    throw std::runtime_error(
        fmt::format("cannot create a temporary folder {}: {}", pattern, std::strerror(errno)));
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // remove_all does not follow symlinks inside
}

void check_output_file(const std::string& option, const std::string& path,
                       const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path out(path);
  const auto fail = [&](const std::string& message) {
    throw common::ConfigError(option, 0, 0, "", path + ": " + message);
  };
  if (fs::is_directory(out, ec)) fail("is a folder; give the path of a file to write");
  if (fs::exists(out, ec))
    for (const std::string& in : inputs)
      if (fs::equivalent(out, in, ec))
        fail("is an input of this command (" + in +
             "); writing the results there would replace it");
  const fs::path parent = out.has_parent_path() ? out.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) fail("its folder " + parent.string() + " does not exist");
}

OutputLock::OutputLock(const std::string& target, Kind kind, const std::string& option) {
  const std::string& dir = target;
  if (kind == Kind::kFolder) {
    std::error_code ec;
    if (std::filesystem::exists(target, ec) && !std::filesystem::is_directory(target, ec))
      throw common::ConfigError(option, 0, 0, "",
                                target +
                                    ": is a file, not a folder; give a folder for the results "
                                    "(created if missing)");
    std::filesystem::create_directories(target, ec);
    if (ec)
      throw common::ConfigError(
          option, 0, 0, "", fmt::format("{}: cannot create the folder: {}", target, ec.message()));
    path_ = target + "/.lock";
  } else {
    path_ = target + ".lock";
  }
  for (int attempt = 0;; ++attempt) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw common::ConfigError(
          option, 0, 0, "",
          fmt::format("{}: cannot create the lock file: {}", path_, std::strerror(errno)));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      char pid[32] = {};
      const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
      ::close(fd_);
      fd_ = -1;
      throw common::ConfigError(
          option, 0, 0, "",
          fmt::format("{} is in use by pid {} (another scalecast run writes there); wait for it "
                      "to finish or give another {}",
                      dir, n > 0 ? std::string(pid, static_cast<std::size_t>(n)) : "?", option));
    }
    // The previous holder may have removed the file between our open and flock: then this lock
    // is on a dead inode; try again on the new file.
    struct stat held {
    }, now{};
    if (::fstat(fd_, &held) == 0 && ::lstat(path_.c_str(), &now) == 0 &&
        held.st_ino == now.st_ino && held.st_dev == now.st_dev)
      break;
    ::close(fd_);
    fd_ = -1;
    if (attempt > 100) throw std::runtime_error(path_ + ": cannot take the lock");
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is only for the message of a second run; the lock itself holds.
  }
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still holding the lock: no one else holds this inode
  ::close(fd_);
}

}  // namespace scalecast::cli
