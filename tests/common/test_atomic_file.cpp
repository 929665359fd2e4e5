#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
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
    // The writer's partial output went to the temporary file, which the failure removed.
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
    CHECK(files == 1);
    fs::remove_all(dir);
  }

  TEST_CASE("atomic write streams to its temporary file instead of holding the content") {
    // A trace of 1,000 iterations is hundreds of MB: held in a string stream first, the whole
    // file sat in memory (twice, while the string grew). Written through, the temporary file
    // already holds the first megabytes while the writer is still producing.
    const fs::path dir = fs::temp_directory_path() / "scalecast_atomic_stream";
    fs::remove_all(dir);
    const std::string path = (dir / "big.txt").string();
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const std::string line(1023, 'x');
    std::uintmax_t on_disk_midway = 0;
    scalecast::common::write_file_atomic(path, [&](std::ostream& out) {
      for (int i = 0; i < 4096; ++i) {  // 4 MiB
        out << line << '\n';
        if (i == 3071) on_disk_midway = fs::file_size(tmp);
      }
    });
    CHECK(on_disk_midway >= (std::uintmax_t{2} << 20));  // at least 2 of the 3 MiB written
    CHECK(fs::file_size(path) == (std::uintmax_t{4} << 20));
    CHECK(!fs::exists(tmp));
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

  TEST_CASE("a device or pipe is written in place, never replaced by a renamed file") {
    // A pipe: the content arrives through it and the pipe is still a pipe.
    const fs::path dir = fs::temp_directory_path() / "scalecast_atomic_fifo";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path fifo = dir / "out.json";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::ofstream(dir / "keep").close();
    const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // a reader, so writing opens
    REQUIRE(rd >= 0);
    scalecast::common::write_file_atomic(fifo.string(), "{}\n");
    char got[8] = {};
    CHECK(::read(rd, got, sizeof got) == 3);
    CHECK(std::string(got) == "{}\n");
    ::close(rd);
    CHECK(fs::is_fifo(fs::symlink_status(fifo)));
    fs::remove_all(dir);
    // /dev/full: the write fails with the system's reason and the device stays a device.
    if (fs::is_character_file(fs::symlink_status("/dev/full"))) {
      try {
        scalecast::common::write_file_atomic("/dev/full", "x");
        FAIL("no error");
      } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()) == "/dev/full: error: cannot write: No space left on device");
      }
      CHECK(fs::is_character_file(fs::symlink_status("/dev/full")));
    }
  }
}
