#include <doctest/doctest.h>

#include <unistd.h>

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

TEST_SUITE("unit") {
  TEST_CASE("atomic write never follows a planted symlink at its temporary name") {
    const fs::path dir = fs::temp_directory_path() / "scalecast_atomic_symlink";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path victim = dir / "victim.txt";
    std::ofstream(victim) << "precious\n";
    const fs::path out = dir / "out.txt";
    fs::create_symlink(victim, out.string() + ".tmp." + std::to_string(::getpid()));
    scalecast::common::write_file_atomic(out.string(), "result\n");
    std::ifstream v(victim), o(out);
    std::stringstream vs, os;
    vs << v.rdbuf();
    os << o.rdbuf();
    CHECK(vs.str() == "precious\n");
    CHECK(os.str() == "result\n");
    CHECK(!fs::is_symlink(out));
    fs::remove_all(dir);
  }

  TEST_CASE("a failed atomic write names the path and the system's reason") {
    // A folder in the way of the file: rename fails (EISDIR), nothing else is left behind.
    const fs::path dir = fs::temp_directory_path() / "scalecast_atomic_fail";
    fs::remove_all(dir);
    fs::create_directories(dir / "out.json");
    try {
      scalecast::common::write_file_atomic((dir / "out.json").string(), "x");
      FAIL("no error");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) ==
            (dir / "out.json").string() + ": error: cannot rename into place: Is a directory");
    }
    int entries = 0;
    for (const auto& e : fs::directory_iterator(dir)) entries += e.path().filename() != "out.json";
    CHECK(entries == 0);
    fs::remove_all(dir);
  }
}
