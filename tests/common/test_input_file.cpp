#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "common/input_file.hpp"

namespace fs = std::filesystem;
using scalecast::common::ConfigError;
using scalecast::common::csv_field;
using scalecast::common::read_input_file;

namespace {

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("input files are regular files within the size limit") {
    const fs::path dir = fs::temp_directory_path() / "scalecast_input_file_test";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string small = (dir / "small.yaml").string();
    std::ofstream(small) << "a: 1\n";
    CHECK(read_input_file(small, 16) == "a: 1\n");
    CHECK(error_of([&] { read_input_file(small, 4); }) ==
          small + ": error: file is 5 bytes, over the 4 bytes limit of this kind of input");
    // /dev/zero never ends, a FIFO without a writer blocks: both refused before reading.
    CHECK(error_of([&] { read_input_file("/dev/zero", 1 << 20); }) ==
          "/dev/zero: error: expected a regular file (not a device, FIFO or socket)");
    const std::string fifo = (dir / "fifo").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK(error_of([&] { read_input_file(fifo, 1 << 20); }) ==
          fifo + ": error: expected a regular file (not a device, FIFO or socket)");
    CHECK(error_of([&] { read_input_file(dir.string(), 1 << 20); }) ==
          dir.string() + ": error: expected a file, got a directory");
    CHECK(error_of([&] { read_input_file((dir / "none").string(), 1 << 20, "shown.yaml"); }) ==
          "shown.yaml: error: cannot open file: No such file or directory");
    // A sparse 17 MiB YAML file: over the YAML limit without filling the disk.
    const std::string big = (dir / "big.yaml").string();
    std::ofstream(big).close();
    fs::resize_file(big, (17u << 20));
    CHECK(error_of([&] { scalecast::common::ConfigNode::load_file(big); }) ==
          big + ": error: file is 17825792 bytes, over the 16 MiB limit of this kind of input");
    fs::remove_all(dir);
  }

  TEST_CASE("YAML text must be UTF-8 and the first bad byte is located") {
    using scalecast::common::ConfigNode;
    CHECK(error_of([] { ConfigNode::load_string("name: ok\nscenario: caf\xe9 x\n", "s.yaml"); }) ==
          "s.yaml:2:14: error: invalid UTF-8 (byte 0xE9); save the file as UTF-8");
    // Multi-byte characters count as one column; valid 2-, 3- and 4-byte forms pass.
    CHECK(error_of([] {
            ConfigNode::load_string("name: \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff\n", "s.yaml");
          }) == "s.yaml:1:10: error: invalid UTF-8 (byte 0xFF); save the file as UTF-8");
    CHECK(error_of([] {
            ConfigNode::load_string("name: \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\n", "s.yaml");
          }) == "<no error>");
    // Overlong forms, surrogates and a truncated sequence are not UTF-8.
    using scalecast::common::find_invalid_utf8;
    CHECK(find_invalid_utf8("\xc0\xaf") == 0);
    CHECK(find_invalid_utf8("ab\xed\xa0\x80") == 2);
    CHECK(find_invalid_utf8("abc\xe2\x82") == 3);
    CHECK(find_invalid_utf8("plain") == std::string_view::npos);
  }

  TEST_CASE("a control character YAML does not allow is located, not misread") {
    using scalecast::common::ConfigNode;
    // A NUL used to reach yaml-cpp, which said "unknown escape character: y".
    CHECK(error_of([] {
            ConfigNode::load_string(std::string("name: x\0y\nplatform: summit\n", 25), "s.yaml");
          }) ==
          "s.yaml:1:8: error: control character (byte 0x00) is not allowed in YAML; remove it or "
          "write it as an escape inside a quoted string");
    CHECK(error_of([] {
            ConfigNode::load_string("a: 1\nb: \x1b[0m\n", "s.yaml");
          }).find("s.yaml:2:4: error: control character (byte 0x1B)") == 0);
    CHECK(error_of([] { ConfigNode::load_string("a: 1\x7f\n", "s.yaml"); }).find("(byte 0x7F)") !=
          std::string::npos);
    // Tab, carriage return and line feed are YAML's own; an escape in a quoted string is text.
    CHECK(error_of([] { ConfigNode::load_string("a: \"x\ty\"\r\nb: \"\\x1b\"\n", "s.yaml"); }) ==
          "<no error>");
  }

  TEST_CASE("CSV fields are quoted per RFC 4180 only when needed") {
    CHECK(csv_field("conv1") == "conv1");
    CHECK(csv_field("a,b") == "\"a,b\"");
    CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(csv_field("two\nlines") == "\"two\nlines\"");
    CHECK(csv_field("") == "");
  }
}
