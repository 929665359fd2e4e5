#pragma once
// ConfigNode: a YAML node that knows where it came from. yaml-cpp marks are 0-based, carry no file
// name, and a missing key has no mark at all; ConfigNode keeps the file, the dotted key path and
// the nearest mark, so every lookup or conversion failure becomes a precise ConfigError
// ("file:line:col: error: key.path: what was expected"). Loaders check keys themselves:
// check_keys() rejects unknown keys with a "did you mean" suggestion.

#include <yaml-cpp/yaml.h>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/config_error.hpp"
#include "common/units.hpp"

namespace scalecast::common {

class ConfigNode {
 public:
  // Loads a YAML file; `display_name` (default: the path as given) is what errors print.
  static ConfigNode load_file(const std::string& path, const std::string& display_name = "");
  // Parses YAML text; `name` stands for the file in error messages.
  static ConfigNode load_string(const std::string& text, const std::string& name);

  ConfigNode(YAML::Node node, std::shared_ptr<const std::string> file, std::string path, int line,
             int column);

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return !node_.IsDefined() || node_.IsNull(); }

  // Child lookup. required() fails at this map's position when the key is missing.
  bool has(std::string_view key) const;
  ConfigNode required(std::string_view key) const;
  std::optional<ConfigNode> optional(std::string_view key) const;

  // Fails on the first key not in `allowed` (with a suggestion) and on duplicate keys.
  void check_keys(std::initializer_list<std::string_view> allowed) const;
  void check_keys(const std::vector<std::string>& allowed) const;

  // Children of a sequence ("path[i]") or of a map (key, "path.key"), in document order.
  std::vector<ConfigNode> items() const;
  std::vector<std::pair<std::string, ConfigNode>> entries() const;

  // Scalar conversions; each fails with the expectation and the text it found.
  std::string as_string() const;
  double as_double() const;
  std::int64_t as_int() const;
  std::int64_t as_count() const;  // an integer >= 0
  // An integer in [lo, hi], read as an integer (never through a double or a narrowing cast);
  // outside the range the message states it: "expected a whole number from 1 to 1,000,000".
  std::int64_t as_int_in(std::int64_t lo, std::int64_t hi) const;
  // int_in for int-sized fields: hi must fit an int (checked), so the result always does.
  int as_int_field(int lo, int hi) const;
  bool as_bool() const;
  double as_quantity(Quantity kind) const;
  // A quantity in [lo, hi] (SI units), the limits stated in the message in readable units
  // ("expected a bandwidth from 1 kB/s to 1 PB/s, got \"0GBps\""). lo_open: lo itself is not
  // allowed ("greater than 0 B/s").
  double as_quantity_in(Quantity kind, double lo, double hi, bool lo_open = false) const;
  std::vector<std::string> as_string_list() const;  // a sequence of scalars, or one scalar

  // Convenience: the child's value if present, else the default.
  std::string string_or(std::string_view key, const std::string& fallback) const;
  double double_or(std::string_view key, double fallback) const;
  std::int64_t count_or(std::string_view key, std::int64_t fallback) const;
  int int_field_or(std::string_view key, int lo, int hi, int fallback) const;
  bool bool_or(std::string_view key, bool fallback) const;
  double quantity_or(std::string_view key, Quantity kind, double fallback) const;
  double quantity_in_or(std::string_view key, Quantity kind, double lo, double hi, double fallback,
                        bool lo_open = false) const;

  // Throws a ConfigError at this node with this node's key path.
  [[noreturn]] void fail(const std::string& message) const;
  // The same error, without throwing (for callers that collect or rethrow).
  ConfigError error(const std::string& message) const;

  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const YAML::Node& raw() const { return node_; }
  // The key path of a child, for messages about keys that do not exist yet.
  std::string child_path(std::string_view key) const;

 private:
  ConfigNode child(const YAML::Node& value, std::string path, const YAML::Mark& fallback) const;
  std::string scalar_text() const;

  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string path_;
  int line_;    // 1-based; 0 when unknown
  int column_;  // 1-based; 0 when unknown
};

// An integer with thousands separators, as limits are stated in messages: 1000000 -> "1,000,000".
std::string format_count(std::int64_t n);

// Closest candidate to `word` by edit distance, or "" when none is close enough to suggest.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace scalecast::common
