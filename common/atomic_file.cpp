#include "common/atomic_file.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace scalecast::common {

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write file", tmp));
    try {
      fill(out);
    } catch (...) {
      out.close();
      fs::remove(tmp);
      throw;
    }
    out.flush();
    if (!out) {
      fs::remove(tmp);
      throw std::runtime_error(fmt::format("{}: write failed", tmp));
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp);
    throw std::runtime_error(fmt::format("{}: cannot rename into place: {}", path, ec.message()));
  }
}

void write_file_atomic(const std::string& path, const std::string& content) {
  write_file_atomic(path, [&content](std::ostream& out) { out << content; });
}

}  // namespace scalecast::common
