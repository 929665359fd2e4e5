#include "validation/trace_reader.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/config_error.hpp"
#include "common/input_file.hpp"

namespace scalecast::validation {

TraceFormat parse_trace_format(const std::string& text) {
  if (text == "auto") return TraceFormat::kAuto;
  if (text == "chrome") return TraceFormat::kChrome;
  if (text == "kineto") return TraceFormat::kKineto;
  if (text == "horovod") return TraceFormat::kHorovod;
  if (text == "nsys") return TraceFormat::kNsys;
  throw std::invalid_argument(fmt::format(
      "trace format: expected auto, chrome, kineto, horovod or nsys, got \"{}\"", text));
}

Trace read_trace(const std::string& path, const TraceReadOptions& options) {
  // Only regular files (a FIFO or /dev/zero would block or never end); nsys exports (SQLite)
  // are opened by SQLite itself, JSON text is read whole, up to common::kTraceMaxBytes.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw common::ConfigError(path, 0, 0, "",
                              std::filesystem::exists(path, ec)
                                  ? "expected a regular file (not a device, FIFO or folder)"
                                  : "cannot open the trace file");
  TraceFormat format = options.format;
  if (format == TraceFormat::kAuto) {
    std::ifstream in(path, std::ios::binary);
    char magic[15] = {};
    in.read(magic, sizeof magic);
    if (in && std::string(magic, sizeof magic) == "SQLite format 3") format = TraceFormat::kNsys;
  }
  if (format == TraceFormat::kNsys) return read_nsys_sqlite(path, options);
  const std::string text = common::read_input_file(path, common::kTraceMaxBytes);
  if (format == TraceFormat::kAuto) {
    {
      // Horovod: a bare array naming its phases, or one still open (no closing bracket).
      const std::size_t first = text.find_first_not_of(" \t\r\n");
      const std::size_t last = text.find_last_not_of(" \t\r\n");
      const bool bare_array = first != std::string::npos && text[first] == '[';
      const bool open = bare_array && text[last] != ']';
      const bool horovod_names = text.find("NEGOTIATE_") != std::string::npos ||
                                 text.find("start_time_since_epoch_in_micros") != std::string::npos;
      if (bare_array && (open || horovod_names)) format = TraceFormat::kHorovod;
    }
  }
  if (text.empty()) throw common::ConfigError(path, 0, 0, "", "the trace file is empty");
  return read_json_trace(text, path, format, options);
}

}  // namespace scalecast::validation
