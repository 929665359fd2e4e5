#include "common/config_node.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "common/input_file.hpp"

namespace scalecast::common {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool mark_valid(const YAML::Mark& m) { return m.line >= 0 && m.column >= 0 && m.pos >= 0; }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string format_count(std::int64_t n) {
  const bool negative = n < 0;
  // Work on the magnitude as unsigned so INT64_MIN has one too.
  std::uint64_t m = negative ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  std::string digits = std::to_string(m), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return negative ? "-" + out : out;
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(lower(std::string(word)), lower(c));
    if (d < best_distance) best_distance = d, best = c;
  }
  const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_distance <= limit ? best : std::string();
}

namespace {

// The 1-based line of the `---` that starts the second document of `text` (`second` is that
// document, whose mark is its first value, or none when it is empty).
int second_document_line(const std::string& text, const YAML::Node& second) {
  int line = 0;
  bool started = false;  // the first document has begun: content, or its own `---`
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view l(text.data() + at, end - at);
    ++line;
    const bool marker =
        l.starts_with("---") && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    if (marker && started) return line;
    const std::size_t first = l.find_first_not_of(" \t\r");
    if (marker || (first != std::string_view::npos && l[first] != '#' && l[first] != '%'))
      started = true;
    at = end + 1;
  }
  const YAML::Mark m = second.Mark();
  return mark_valid(m) ? m.line + 1 : 1;
}

// yaml-cpp ends a quoted scalar that is never closed at the end of the text without a word:
// `name: "oops` as a file's last line was read as the name "oops ", and followed by more lines
// it swallowed them (`model:` then reported missing). Every quoted scalar, key or value, is
// found again from its mark and must close before the end.
// An alias is its anchor's node again (same mark): each collection is walked once, so a
// "billion laughs" of aliases stays linear.
void check_quotes_closed(const std::string& text, const YAML::Node& node, const std::string& name,
                         std::set<int>& walked) {
  if (node.IsMap() || node.IsSequence()) {
    const YAML::Mark m = node.Mark();
    if (mark_valid(m) && !walked.insert(m.pos).second) return;
  }
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      check_quotes_closed(text, it->first, name, walked);
      check_quotes_closed(text, it->second, name, walked);
    }
    return;
  }
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) check_quotes_closed(text, item, name, walked);
    return;
  }
  if (!node.IsScalar() || node.Tag() != "!") return;  // "!": a quoted scalar
  const YAML::Mark m = node.Mark();
  if (!mark_valid(m) || m.pos < 0 || static_cast<std::size_t>(m.pos) >= text.size()) return;
  const char quote = text[static_cast<std::size_t>(m.pos)];
  if (quote != '"' && quote != '\'') return;
  for (std::size_t i = static_cast<std::size_t>(m.pos) + 1; i < text.size(); ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;  // an escape: the next character is the escaped one
    } else if (text[i] == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;  // '' inside single quotes is one quote
        continue;
      }
      return;
    }
  }
  throw ConfigError(
      name, m.line + 1, m.column + 1, "",
      fmt::format("YAML syntax error: this {}-quoted string is never closed (expected "
                  "a closing {} before the end of the file)",
                  quote == '"' ? "double" : "single", quote));
}

}  // namespace

ConfigNode ConfigNode::load_file(const std::string& path, const std::string& display_name) {
  const std::string name = display_name.empty() ? path : display_name;
  return load_string(read_input_file(path, kYamlMaxBytes, name), name);
}

ConfigNode ConfigNode::load_string(const std::string& text, const std::string& name) {
  auto file = std::make_shared<const std::string>(name);
  // Outputs are UTF-8, and YAML has no place for most control bytes: refuse both here, with
  // their place.
  check_yaml_characters(text, name);
  YAML::Node root;
  try {
    std::vector<YAML::Node> documents = YAML::LoadAll(text);
    // YAML::Load read the first document and dropped the rest: a second one after `---` (say,
    // another `nodes:`) was silently ignored.
    if (documents.size() > 1) {
      throw ConfigError(name, second_document_line(text, documents[1]), 1, "",
                        "a second YAML document starts here; expected one document (nothing "
                        "after its `---` would be read)");
    }
    if (!documents.empty()) root = documents.front();
    std::set<int> walked;
    check_quotes_closed(text, root, name, walked);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(name, e.mark.line + 1, e.mark.column + 1, "",
                      fmt::format("YAML syntax error: {}", e.msg));
  }
  const YAML::Mark m = root.Mark();
  return ConfigNode(root, file, "", mark_valid(m) ? m.line + 1 : 1,
                    mark_valid(m) ? m.column + 1 : 1);
}

ConfigNode::ConfigNode(YAML::Node node, std::shared_ptr<const std::string> file, std::string path,
                       int line, int column)
    : node_(std::move(node)),
      file_(std::move(file)),
      path_(std::move(path)),
      line_(line),
      column_(column) {}

std::string ConfigNode::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
}

ConfigNode ConfigNode::child(const YAML::Node& value, std::string path,
                             const YAML::Mark& fallback) const {
  // An empty value's mark points past it (often at the next line); the key is the better place.
  YAML::Mark m = value.Mark();
  if (!mark_valid(m) || (value.IsNull() && mark_valid(fallback))) m = fallback;
  if (mark_valid(m)) return ConfigNode(value, file_, std::move(path), m.line + 1, m.column + 1);
  return ConfigNode(value, file_, std::move(path), line_, column_);
}

ConfigError ConfigNode::error(const std::string& message) const {
  return ConfigError(*file_, line_, column_, path_, message);
}

void ConfigNode::fail(const std::string& message) const { throw error(message); }

bool ConfigNode::has(std::string_view key) const {
  if (!node_.IsMap()) return false;
  const YAML::Node v = node_[std::string(key)];
  return v.IsDefined();
}

std::optional<ConfigNode> ConfigNode::optional(std::string_view key) const {
  if (is_null()) return std::nullopt;
  if (!node_.IsMap()) fail("expected a map");
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.Scalar() == key) {
      return child(it->second, child_path(key), it->first.Mark());
    }
  }
  return std::nullopt;
}

ConfigNode ConfigNode::required(std::string_view key) const {
  auto c = optional(key);
  if (!c) fail(fmt::format("missing required key '{}'", key));
  return *c;
}

void ConfigNode::check_keys(std::initializer_list<std::string_view> allowed) const {
  std::vector<std::string> v;
  for (auto k : allowed) v.emplace_back(k);
  check_keys(v);
}

void ConfigNode::check_keys(const std::vector<std::string>& allowed) const {
  if (is_null()) return;
  if (!node_.IsMap()) fail("expected a map");
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.Scalar();
    const ConfigNode at = child(it->first, child_path(key), it->first.Mark());
    if (!seen.insert(key).second) at.fail("duplicate key");
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      const std::string hint = closest_match(key, allowed);
      if (!hint.empty()) at.fail(fmt::format("unknown key (did you mean '{}'?)", hint));
      at.fail(fmt::format("unknown key (expected one of: {})", fmt::join(allowed, ", ")));
    }
  }
}

std::vector<ConfigNode> ConfigNode::items() const {
  if (!node_.IsSequence()) fail("expected a list");
  std::vector<ConfigNode> out;
  std::size_t i = 0;
  for (const auto& item : node_) {
    out.push_back(child(item, fmt::format("{}[{}]", path_, i++), node_.Mark()));
  }
  return out;
}

std::vector<std::pair<std::string, ConfigNode>> ConfigNode::entries() const {
  if (!node_.IsMap()) fail("expected a map");
  std::vector<std::pair<std::string, ConfigNode>> out;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.Scalar();
    out.emplace_back(key, child(it->second, child_path(key), it->first.Mark()));
  }
  return out;
}

std::string ConfigNode::scalar_text() const {
  if (is_null()) fail("expected a value, got nothing");
  if (!node_.IsScalar())
    fail(node_.IsMap() ? "expected a scalar, got a map" : "expected a scalar, got a list");
  return node_.Scalar();
}

std::string ConfigNode::as_string() const { return scalar_text(); }

double ConfigNode::as_double() const {
  const std::string s = scalar_text();
  double v = 0.0;
  const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) {
    fail(fmt::format("expected a number, got \"{}\"", s));
  }
  return v + 0.0;  // -0 is 0: it printed as -0.0 in outputs
}

std::int64_t ConfigNode::as_int() const {
  const std::string s = scalar_text();
  std::int64_t v = 0;
  const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
    fail(fmt::format("expected an integer, got \"{}\"", s));
  }
  return v;
}

std::int64_t ConfigNode::as_count() const {
  const std::int64_t v = as_int();
  if (v < 0) fail(fmt::format("expected a non-negative count, got \"{}\"", node_.Scalar()));
  return v;
}

std::int64_t ConfigNode::as_int_in(std::int64_t lo, std::int64_t hi) const {
  const std::string s = scalar_text();
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  const std::string range =
      fmt::format("a whole number from {} to {}", format_count(lo), format_count(hi));
  const bool overflow = ec == std::errc::result_out_of_range;
  if (s.empty() || ptr != end || (ec != std::errc() && !overflow))
    fail(fmt::format("expected {}, got \"{}\"", range, s));
  if (overflow ? s[0] == '-' : v < lo)
    fail(fmt::format("expected at least {} ({}), got {}", format_count(lo), range, s));
  if (overflow || v > hi)
    fail(fmt::format("expected at most {} ({}), got {}", format_count(hi), range, s));
  return v;
}

int ConfigNode::as_int_field(int lo, int hi) const { return static_cast<int>(as_int_in(lo, hi)); }

bool ConfigNode::as_bool() const {
  const std::string s = scalar_text();
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(fmt::format("expected true or false, got \"{}\"", s));
}

double ConfigNode::as_quantity(Quantity kind) const {
  const std::string s = scalar_text();
  try {
    return parse_quantity(s, kind) + 0.0;  // -0s is 0 s: it printed as -0.0 in outputs
  } catch (const UnitError& e) {
    fail(e.what());
  }
}

double ConfigNode::as_quantity_in(Quantity kind, double lo, double hi, bool lo_open) const {
  const double v = as_quantity(kind);
  if (!(lo_open ? v > lo : v >= lo) || !(v <= hi)) {
    const std::string name(quantity_name(kind));
    fail(fmt::format("expected {} {} {} and at most {}, got \"{}\"", name,
                     lo_open ? "greater than" : "of at least", format_quantity(lo, kind),
                     format_quantity(hi, kind), node_.Scalar()));
  }
  return v;
}

std::vector<std::string> ConfigNode::as_string_list() const {
  if (node_.IsScalar()) return {node_.Scalar()};
  std::vector<std::string> out;
  for (const auto& item : items()) out.push_back(item.as_string());
  return out;
}

std::string ConfigNode::string_or(std::string_view key, const std::string& fallback) const {
  auto c = optional(key);
  return c ? c->as_string() : fallback;
}
double ConfigNode::double_or(std::string_view key, double fallback) const {
  auto c = optional(key);
  return c ? c->as_double() : fallback;
}
std::int64_t ConfigNode::count_or(std::string_view key, std::int64_t fallback) const {
  auto c = optional(key);
  return c ? c->as_count() : fallback;
}
int ConfigNode::int_field_or(std::string_view key, int lo, int hi, int fallback) const {
  auto c = optional(key);
  return c ? c->as_int_field(lo, hi) : fallback;
}
bool ConfigNode::bool_or(std::string_view key, bool fallback) const {
  auto c = optional(key);
  return c ? c->as_bool() : fallback;
}
double ConfigNode::quantity_in_or(std::string_view key, Quantity kind, double lo, double hi,
                                  double fallback, bool lo_open) const {
  auto c = optional(key);
  return c ? c->as_quantity_in(kind, lo, hi, lo_open) : fallback;
}
double ConfigNode::quantity_or(std::string_view key, Quantity kind, double fallback) const {
  auto c = optional(key);
  return c ? c->as_quantity(kind) : fallback;
}

}  // namespace scalecast::common
