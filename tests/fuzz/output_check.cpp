#include "tests/fuzz/output_check.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace scalecast::fuzz {
namespace {

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

namespace {

bool is_non_finite_word(std::string w) {
  for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!w.empty() && (w[0] == '-' || w[0] == '+')) w.erase(0, 1);
  return w == "nan" || w == "inf" || w == "infinity" || w == "-nan";
}

bool is_finite_number(const std::string& f) {
  if (f.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(f.c_str(), &end);
  return end == f.c_str() + f.size() && std::isfinite(v);
}

// RFC 4180 fields of one line; a quoted field comes back with `quoted` set (text, not a number).
std::vector<std::pair<std::string, bool>> csv_fields(const std::string& line) {
  std::vector<std::pair<std::string, bool>> out;
  std::string f;
  bool quoted = false, in_quotes = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        f += '"', ++i;
      else if (c == '"')
        in_quotes = false;
      else
        f += c;
    } else if (c == '"') {
      in_quotes = quoted = true;
    } else if (c == ',') {
      out.emplace_back(f, quoted);
      f.clear();
      quoted = false;
    } else if (c != '\r') {
      f += c;
    }
  }
  out.emplace_back(f, quoted);
  return out;
}

// JSON: nan/inf outside strings, and null as a duration or time.
std::string bad_json(const std::string& text) {
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '-' || c == '+') {
      std::size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) ||
                                 text[j] == '-' || text[j] == '+'))
        ++j;
      const std::string word = text.substr(i, j - i);
      if (is_non_finite_word(word)) return context_at(text, i);
      if (word == "null") {
        std::size_t p = i;
        while (p > 0 && text[p - 1] == ' ') --p;
        if (p > 0 && text[p - 1] == ':') {
          --p;
          while (p > 0 && text[p - 1] == ' ') --p;
          if (p > 1 && text[p - 1] == '"') {
            const std::size_t key_start = text.rfind('"', p - 2);
            if (key_start != std::string::npos &&
                is_time_key(text.substr(key_start + 1, p - 2 - key_start)))
              return context_at(text, i);
          }
        }
      }
      i = j - 1;
    }
  }
  return "";
}

// CSV: a nan/inf field in a column that holds numbers elsewhere (a layer may be named "inf").
std::string bad_csv(const std::string& text) {
  std::vector<std::vector<std::pair<std::string, bool>>> rows;
  std::vector<std::size_t> offsets;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    rows.push_back(csv_fields(text.substr(pos, end - pos)));
    offsets.push_back(pos);
    pos = end + 1;
  }
  std::vector<bool> numeric;
  for (std::size_t r = 1; r < rows.size(); ++r)
    for (std::size_t c = 0; c < rows[r].size(); ++c) {
      if (numeric.size() <= c) numeric.resize(c + 1, false);
      if (!rows[r][c].second && is_finite_number(rows[r][c].first)) numeric[c] = true;
    }
  for (std::size_t r = 1; r < rows.size(); ++r)
    for (std::size_t c = 0; c < rows[r].size(); ++c)
      if (!rows[r][c].second && is_non_finite_word(rows[r][c].first) && numeric[c])
        return context_at(text, offsets[r]);
  return "";
}

}  // namespace

std::string bad_value(const std::string& text, bool csv) {
  return csv ? bad_csv(text) : bad_json(text);
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
    const std::string bad = bad_value(ss.str(), p.extension() == ".csv");
    if (!bad.empty()) return p.string() + ": " + bad;
  }
  return "";
}

}  // namespace scalecast::fuzz
