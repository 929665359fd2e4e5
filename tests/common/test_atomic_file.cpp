#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.hpp"

namespace fs = std::filesystem;

TEST_SUITE("unit") {
  TEST_CASE("atomic write creates folders and leaves no temporary file") {
    const fs::path dir = fs::temp_directory_path() / "scalecast_atomic_test" / "sub";
    fs::remove_all(dir.parent_path());
    const std::string path = (dir / "out.txt").string();
    scalecast::common::write_file_atomic(path, "hello\n");
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    CHECK(ss.str() == "hello\n");
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
    CHECK(files == 1);
    fs::remove_all(dir.parent_path());
  }

  TEST_CASE("a failing writer keeps the previous file intact") {
    const fs::path dir = fs::temp_directory_path() / "scalecast_atomic_test2";
    fs::remove_all(dir);
    const std::string path = (dir / "out.txt").string();
    scalecast::common::write_file_atomic(path, "old\n");
    CHECK_THROWS_AS(scalecast::common::write_file_atomic(path,
                                                         [](std::ostream& out) {
                                                           out << "partial";
                                                           throw std::runtime_error("interrupted");
                                                         }),
                    std::runtime_error);
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    CHECK(ss.str() == "old\n");
    fs::remove_all(dir);
  }
}
