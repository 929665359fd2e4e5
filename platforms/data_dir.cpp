#include "platforms/data_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <string_view>

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

bool looks_like_path(const std::string& ref) {
  const auto ends = [&](std::string_view suffix) {
    return ref.size() >= suffix.size() &&
           ref.compare(ref.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ref.find('/') != std::string::npos || ends(".yaml") || ends(".yml");
}

std::string resolve_reference(const std::string& ref, const std::string& referring_file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(ref);
  if (p.is_absolute() || fs::exists(p, ec)) return ref;
  const fs::path beside = fs::path(referring_file).parent_path() / p;
  if (fs::exists(beside, ec)) return beside.lexically_normal().string();
  const std::string found = find_data_file(ref);
  return found.empty() ? ref : found;
}

}  // namespace scalecast::platforms
