#pragma once
// ConfigError: the one error type for bad input. It says where (file, 1-based line and column)
// and what (the dotted key path and the expectation), in the compiler style editors understand:
//   platforms/summit.yaml:12:5: error: node.nvlink.bandwidth: expected a bandwidth like "50GBps",
//   got "50"
// main() catches it, prints what() and exits non-zero.

#include <stdexcept>
#include <string>

namespace scalecast::common {

class ConfigError : public std::runtime_error {
 public:
  // line and column are 1-based; 0 means unknown (then they are left out of the message).
  ConfigError(std::string file, int line, int column, std::string key_path, std::string message);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string key_path_;
  std::string message_;
};

}  // namespace scalecast::common
