#include "common/simulation_environment.hpp"

#include <cstdlib>
#include <string_view>

extern char** environ;

namespace scalecast::common {

namespace {

constexpr std::string_view kTunables = "GLIBC_TUNABLES=";
constexpr std::string_view kHugePages = "glibc.malloc.hugetlb";

// True when the tunables string (name=value entries separated by ':') sets glibc.malloc.hugetlb.
bool sets_huge_pages(std::string_view tunables) {
  while (true) {
    const std::size_t colon = tunables.find(':');
    const std::string_view entry = tunables.substr(0, colon);
    if (entry.substr(0, entry.find('=')) == kHugePages) return true;
    if (colon == std::string_view::npos) return false;
    tunables.remove_prefix(colon + 1);
  }
}

// Null-terminated pointers into `strings`, for posix_spawn.
std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::vector<std::string> simulation_environment(const char* const* env) {
  std::vector<std::string> out;
  bool found = false;
  for (; env != nullptr && *env != nullptr; ++env) {
    std::string entry = *env;
    if (std::string_view(entry).substr(0, kTunables.size()) == kTunables) {
      found = true;
      const std::string_view value = std::string_view(entry).substr(kTunables.size());
      if (!sets_huge_pages(value))
        entry += (value.empty() ? "" : ":") + std::string(kHugePages) + "=1";
    }
    out.push_back(std::move(entry));
  }
  if (!found) out.push_back(std::string(kTunables) + std::string(kHugePages) + "=1");
  return out;
}

int spawn_simulation(pid_t* pid, const std::string& exe, const posix_spawn_file_actions_t* actions,
                     char* const argv[]) {
  std::vector<std::string> env = simulation_environment(environ);
  return ::posix_spawn(pid, exe.c_str(), actions, nullptr, argv, pointers(env).data());
}

bool has_simulation_environment() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables != nullptr && sets_huge_pages(tunables);
}

}  // namespace scalecast::common
