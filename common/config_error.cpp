#include "common/config_error.hpp"

#include <fmt/format.h>

namespace scalecast::common {
namespace {

std::string compose(const std::string& file, int line, int column, const std::string& key_path,
                    const std::string& message) {
  std::string where = file.empty() ? "<input>" : file;
  if (line > 0) {
    where += fmt::format(":{}", line);
    if (column > 0) where += fmt::format(":{}", column);
  }
  if (key_path.empty()) return fmt::format("{}: error: {}", where, message);
  return fmt::format("{}: error: {}: {}", where, key_path, message);
}

}  // namespace

ConfigError::ConfigError(std::string file, int line, int column, std::string key_path,
                         std::string message)
    : std::runtime_error(compose(file, line, column, key_path, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      key_path_(std::move(key_path)),
      message_(std::move(message)) {}

}  // namespace scalecast::common
