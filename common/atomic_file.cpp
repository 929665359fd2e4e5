#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "common/config_error.hpp"

namespace scalecast::common {
namespace {

[[noreturn]] void write_error(const std::string& path, const char* what, int err) {
  throw ConfigError(path, 0, 0, "", fmt::format("{}: {}", what, std::strerror(err)));
}

}  // namespace

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (target.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) write_error(target.parent_path().string(), "cannot create folder", ec.value());
  }
  std::ostringstream buffer;
  fill(buffer);  // a throwing writer leaves nothing behind
  const std::string content = std::move(buffer).str();
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  // O_EXCL | O_NOFOLLOW: never write through a planted symlink or into someone else's file.
  ::unlink(tmp.c_str());  // a leftover of this pid's earlier, killed run (our own name)
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) write_error(path, "cannot write", errno);
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      write_error(path, "cannot write", err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {  // NFS and some file systems report a full disk only here
    const int err = errno;
    ::unlink(tmp.c_str());
    write_error(path, "cannot write", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    write_error(path, "cannot rename into place", err);
  }
}

void write_file_atomic(const std::string& path, const std::string& content) {
  write_file_atomic(path, [&content](std::ostream& out) { out << content; });
}

}  // namespace scalecast::common
