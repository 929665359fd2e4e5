#include "tests/fuzz/output_check.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace scalecast::fuzz {
namespace {

bool is_value_edge(char c) {
  return c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}' || c == '"' ||
         c == '\n' || c == '\r' || c == ' ' || c == '\t';
}

std::string context_at(const std::string& text, std::size_t at) {
  const std::size_t line = static_cast<std::size_t>(
      std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 1);
  const std::size_t from = at > 60 ? at - 60 : 0;
  std::string near = text.substr(from, 100);
  std::replace(near.begin(), near.end(), '\n', ' ');
  return "line " + std::to_string(line) + ": ..." + near + "...";
}

bool is_time_key(const std::string& key) {
  const auto ends = [&](const std::string& s) {
    return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
  };
  return key == "dur" || key == "ts" || ends("_s") || ends("_ms") || ends("_us");
}

}  // namespace

std::string bad_value(const std::string& text) {
  std::string lower(text.size(), ' ');
  std::transform(text.begin(), text.end(), lower.begin(), [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  });
  for (const std::string word : {"nan", "inf", "infinity"}) {
    for (std::size_t at = lower.find(word); at != std::string::npos;
         at = lower.find(word, at + 1)) {
      std::size_t start = at;
      if (start > 0 && (lower[start - 1] == '-' || lower[start - 1] == '+')) --start;
      const std::size_t end = at + word.size();
      const bool left = start == 0 || is_value_edge(lower[start - 1]);
      const bool right = end == lower.size() || is_value_edge(lower[end]);
      if (left && right) return context_at(text, at);
    }
  }
  for (std::size_t at = text.find("null"); at != std::string::npos;
       at = text.find("null", at + 1)) {
    std::size_t p = at;
    while (p > 0 && (text[p - 1] == ' ')) --p;
    if (p == 0 || text[p - 1] != ':') continue;
    --p;
    while (p > 0 && text[p - 1] == ' ') --p;
    if (p == 0 || text[p - 1] != '"') continue;
    const std::size_t key_end = p - 1;
    const std::size_t key_start = text.rfind('"', key_end - 1);
    if (key_start == std::string::npos) continue;
    if (is_time_key(text.substr(key_start + 1, key_end - key_start - 1)))
      return context_at(text, at);
  }
  return "";
}

std::string bad_output(const std::filesystem::path& dir) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    const auto& p = it->path();
    if (!it->is_regular_file() || (p.extension() != ".json" && p.extension() != ".csv")) continue;
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string bad = bad_value(ss.str());
    if (!bad.empty()) return p.string() + ": " + bad;
  }
  return "";
}

}  // namespace scalecast::fuzz
