#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <vector>

#include "common/config_error.hpp"

namespace scalecast::common {
namespace {

[[noreturn]] void write_error(const std::string& path, const char* what, int err) {
  throw ConfigError(path, 0, 0, "", fmt::format("{}: {}", what, std::strerror(err)));
}

// A stream buffer that writes to a file descriptor 1 MiB at a time. The writer's output goes to
// the temporary file as it is produced: buffering it all in memory first (a string stream) held
// twice a 41 MB trace at once for 100 iterations of one Summit node.
class FdBuffer : public std::streambuf {
 public:
  explicit FdBuffer(int fd) : fd_(fd), buffer_(std::size_t{1} << 20) { reset(); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  void reset() { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  bool drain() {
    if (error_ != 0) return false;
    const char* p = pbase();
    std::size_t left = static_cast<std::size_t>(pptr() - pbase());
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = n < 0 ? errno : EIO;
        return false;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    reset();
    return true;
  }

  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

}  // namespace

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code sec;
  const fs::file_status st = fs::symlink_status(target, sec);
  if (!sec && (fs::is_character_file(st) || fs::is_block_file(st) || fs::is_fifo(st) ||
               fs::is_socket(st))) {
    // A device or a pipe is written in place: a finished file renamed over it replaced the
    // device node (as root, /dev/full became a plain file and the write "succeeded").
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) write_error(path, "cannot open", errno);
    FdBuffer buffer(fd);
    std::ostream out(&buffer);
    try {
      fill(out);
    } catch (...) {
      ::close(fd);
      throw;
    }
    out.flush();
    const int err = buffer.error() != 0 ? buffer.error() : (!out ? EIO : 0);
    if (::close(fd) != 0 && err == 0) write_error(path, "cannot write", errno);
    if (err != 0) write_error(path, "cannot write", err);
    return;
  }
  if (target.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) write_error(target.parent_path().string(), "cannot create folder", ec.value());
  }
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  // O_EXCL | O_NOFOLLOW: never write through a planted symlink or into someone else's file.
  ::unlink(tmp.c_str());  // a leftover of this pid's earlier, killed run (our own name)
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) write_error(path, "cannot write", errno);
  FdBuffer buffer(fd);
  std::ostream out(&buffer);
  try {
    fill(out);  // a throwing writer leaves nothing behind
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  out.flush();
  if (buffer.error() != 0 || !out) {
    const int err = buffer.error() != 0 ? buffer.error() : EIO;
    ::close(fd);
    ::unlink(tmp.c_str());
    write_error(path, "cannot write", err);
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
