#include "cli/database_cache.hpp"

#include <filesystem>
#include <map>
#include <mutex>

namespace scalecast::cli {
namespace {

struct Entry {
  std::uintmax_t size_bytes = 0;
  std::filesystem::file_time_type modified;
  calibration::Database db;
};

}  // namespace

const calibration::Database& cached_database(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, Entry> cache;
  std::error_code size_ec, time_ec;
  const std::uintmax_t size = std::filesystem::file_size(path, size_ec);
  const auto modified = std::filesystem::last_write_time(path, time_ec);
  std::lock_guard lock(mutex);
  const auto it = cache.find(path);
  if (!size_ec && !time_ec && it != cache.end() && it->second.size_bytes == size &&
      it->second.modified == modified) {
    return it->second.db;
  }
  // Parsed before the entry is touched, so a file that fails to load leaves no entry behind.
  Entry fresh{size, modified, calibration::load_database(path)};
  Entry& e = cache[path];
  e = std::move(fresh);
  return e.db;
}

}  // namespace scalecast::cli
