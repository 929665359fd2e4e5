#pragma once
// Reading the files a user hands scalecast, defensively: only regular files (a FIFO or
// /dev/zero would block or never end), at most a stated size, and text that is valid UTF-8
// (every output is UTF-8 JSON or CSV, so a stray Latin-1 byte is refused where it is read, with
// its line and column, instead of failing the JSON writer after the simulations ran). Plus the
// CSV field quoting every CSV writer uses.

#include <cstdint>
#include <string>
#include <string_view>

namespace scalecast::common {

// Size limits of input files (bytes): YAML scenarios, platforms, models, calibration databases
// and validation files; measured traces (Chrome/Kineto/Horovod JSON).
inline constexpr std::uint64_t kYamlMaxBytes = 16ull << 20;    // 16 MiB
inline constexpr std::uint64_t kTraceMaxBytes = 256ull << 20;  // 256 MiB

// The whole file; ConfigError (file "path") when it cannot be opened, is not a regular file or
// is larger than `max_bytes`. `display_name` (default: the path) is what errors print.
std::string read_input_file(const std::string& path, std::uint64_t max_bytes,
                            const std::string& display_name = "");

// Throws ConfigError(name, line, column) at the first byte sequence that is not UTF-8.
void check_utf8(std::string_view text, const std::string& name);
// check_utf8, and ConfigError at the first control character YAML does not allow (C0 controls
// other than tab, line feed and carriage return; DEL).
void check_yaml_characters(std::string_view text, const std::string& name);
// The offset of the first invalid UTF-8 sequence, or std::string_view::npos.
std::size_t find_invalid_utf8(std::string_view text);

// One CSV field (RFC 4180): as is, or double-quoted with inner quotes doubled when it holds a
// comma, a quote, a carriage return or a newline.
std::string csv_field(std::string_view text);

}  // namespace scalecast::common
