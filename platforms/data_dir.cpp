#include "platforms/data_dir.hpp"

#include <cstdlib>
#include <filesystem>

namespace scalecast::platforms {

std::vector<std::string> data_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("SCALECAST_DATA_DIR"); env != nullptr && *env != '\0') {
    dirs.emplace_back(env);
  }
  dirs.emplace_back(".");
#ifdef SCALECAST_DEFAULT_DATA_DIR
  dirs.emplace_back(SCALECAST_DEFAULT_DATA_DIR);
#endif
  return dirs;
}

std::string find_data_file(const std::string& relative) {
  for (const auto& dir : data_dirs()) {
    const std::filesystem::path p = std::filesystem::path(dir) / relative;
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return p.lexically_normal().string();
  }
  return {};
}

}  // namespace scalecast::platforms
