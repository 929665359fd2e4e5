#include "common/input_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include <cerrno>
#include <cstring>

#include "common/config_error.hpp"

namespace scalecast::common {

std::string read_input_file(const std::string& path, std::uint64_t max_bytes,
                            const std::string& display_name) {
  const std::string name = display_name.empty() ? path : display_name;
  // O_NONBLOCK: opening a FIFO with no writer must not hang before fstat refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw ConfigError(name, 0, 0, "", fmt::format("cannot open file: {}", std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    throw ConfigError(name, 0, 0, "", fmt::format("cannot read file: {}", std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    throw ConfigError(name, 0, 0, "",
                      S_ISDIR(st.st_mode)
                          ? "expected a file, got a directory"
                          : "expected a regular file (not a device, FIFO or socket)");
  const std::string limit = max_bytes >= (1u << 20) ? fmt::format("{} MiB", max_bytes >> 20)
                                                    : fmt::format("{} bytes", max_bytes);
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    throw ConfigError(name, 0, 0, "",
                      fmt::format("file is {} bytes, over the {} limit of this kind of input",
                                  st.st_size, limit));
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw ConfigError(name, 0, 0, "", fmt::format("cannot read file: {}", std::strerror(errno)));
    }
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes)  // grew while being read
      throw ConfigError(
          name, 0, 0, "",
          fmt::format("file is over the {} MiB limit of this kind of input", max_bytes >> 20));
  }
  return text;
}

std::size_t find_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte (no overlongs/surrogates)
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + len > s.size()) return i;
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

namespace {

// Line and column (characters, 1-based) of byte `bad` of `text`.
std::pair<int, int> place_of(std::string_view text, std::size_t bad) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < bad; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++col;  // count characters, not continuation bytes
    }
  }
  return {line, col};
}

}  // namespace

void check_utf8(std::string_view text, const std::string& name) {
  const std::size_t bad = find_invalid_utf8(text);
  if (bad == std::string_view::npos) return;
  const auto [line, col] = place_of(text, bad);
  throw ConfigError(name, line, col, "",
                    fmt::format("invalid UTF-8 (byte 0x{:02X}); save the file as UTF-8",
                                static_cast<unsigned char>(text[bad])));
}

void check_yaml_characters(std::string_view text, const std::string& name) {
  check_utf8(text, name);
  // YAML 1.2 (section 5.1, c-printable) allows tab, line feed and carriage return of the C0
  // controls, and not DEL: yaml-cpp reads the others as something else (a NUL became "unknown
  // escape character"), so they are refused here, where their place is known.
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      const auto [line, col] = place_of(text, i);
      throw ConfigError(name, line, col, "",
                        fmt::format("control character (byte 0x{:02X}) is not allowed in YAML; "
                                    "remove it or write it as an escape inside a quoted string",
                                    c));
    }
  }
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace scalecast::common
