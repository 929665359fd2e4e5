#include <doctest/doctest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "common/simulation_environment.hpp"

namespace fs = std::filesystem;
using scalecast::common::simulation_environment;
using scalecast::common::spawn_simulation;

namespace {

std::vector<std::string> env_of(std::vector<const char*> entries) {
  entries.push_back(nullptr);
  return simulation_environment(entries.data());
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Sets an environment variable for one scope (nullopt: unset) and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Runs `argv` through spawn_simulation and waits; returns its exit code (-1: not started or
// killed).
int spawn_and_wait(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (spawn_simulation(&pid, args.front(), nullptr, argv.data()) != 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace

TEST_SUITE("common") {
  TEST_CASE("simulation environment: huge pages are asked of glibc unless the caller chose") {
    SUBCASE("no GLIBC_TUNABLES: added, the rest kept in order") {
      CHECK(env_of({"A=1", "PATH=/bin"}) ==
            std::vector<std::string>{"A=1", "PATH=/bin", "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"});
    }
    SUBCASE("other tunables: appended after a colon") {
      CHECK(env_of({"GLIBC_TUNABLES=glibc.malloc.arena_max=2", "B=2"}) ==
            std::vector<std::string>{
                "GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1", "B=2"});
    }
    SUBCASE("an empty GLIBC_TUNABLES: no leading colon") {
      CHECK(env_of({"GLIBC_TUNABLES="}) ==
            std::vector<std::string>{"GLIBC_TUNABLES=glibc.malloc.hugetlb=1"});
    }
    SUBCASE("the caller's own hugetlb setting, off or on, first or last, is kept") {
      for (const char* own :
           {"GLIBC_TUNABLES=glibc.malloc.hugetlb=0", "GLIBC_TUNABLES=glibc.malloc.hugetlb=2",
            "GLIBC_TUNABLES=glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0",
            "GLIBC_TUNABLES=glibc.malloc.hugetlb=0:glibc.malloc.arena_max=2"}) {
        CAPTURE(own);
        CHECK(env_of({own}) == std::vector<std::string>{own});
      }
    }
    SUBCASE("a tunable whose name only starts like it does not count") {
      CHECK(env_of({"GLIBC_TUNABLES=glibc.malloc.hugetlbx=0"}) ==
            std::vector<std::string>{
                "GLIBC_TUNABLES=glibc.malloc.hugetlbx=0:glibc.malloc.hugetlb=1"});
    }
    SUBCASE("a variable that merely contains the name is not GLIBC_TUNABLES") {
      CHECK(env_of({"MY_GLIBC_TUNABLES=glibc.malloc.hugetlb=0"}) ==
            std::vector<std::string>{"MY_GLIBC_TUNABLES=glibc.malloc.hugetlb=0",
                                     "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"});
    }
  }

  TEST_CASE("simulation environment: a spawned simulation process gets it") {
    const fs::path out =
        fs::temp_directory_path() / ("scalecast-env-" + std::to_string(::getpid()));
    const std::string script = "printf '%s' \"$GLIBC_TUNABLES\" > '" + out.string() + "'";
    {
      const ScopedEnv env("GLIBC_TUNABLES", "glibc.malloc.arena_max=4");
      REQUIRE(spawn_and_wait({"/bin/sh", "-c", script}) == 0);
      CHECK(read_all(out) == "glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1");
    }
    {
      const ScopedEnv env("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0");
      REQUIRE(spawn_and_wait({"/bin/sh", "-c", script}) == 0);
      CHECK(read_all(out) == "glibc.malloc.hugetlb=0");
    }
    fs::remove(out);
  }

  TEST_CASE("simulation environment: glibc then backs a large allocation with huge pages") {
    // glibc asks for huge pages (madvise) only where the kernel's transparent huge pages are in
    // "madvise" mode; elsewhere there is nothing to observe.
    const std::string mode = read_all("/sys/kernel/mm/transparent_hugepage/enabled");
    if (mode.find("[madvise]") == std::string::npos) {
      MESSAGE("transparent huge pages not in madvise mode here (" << mode << "): not checked");
      return;
    }
    // A 64 MiB allocation (glibc maps it) and whether any mapping of the process carries the
    // kernel's huge-page advice flag (VmFlags "hg" in /proc/self/smaps): exit 0 if so, 3 if not.
    const std::string check =
        "b = bytearray(64 << 20)\n"
        "flags = [l.split()[1:] for l in open('/proc/self/smaps') if l.startswith('VmFlags')]\n"
        "raise SystemExit(0 if any('hg' in f for f in flags) else 3)\n";
    {
      const ScopedEnv env("GLIBC_TUNABLES", std::nullopt);
      CHECK(spawn_and_wait({"/usr/bin/python3", "-c", check}) == 0);
    }
    {
      const ScopedEnv env("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0");  // the user's off switch
      CHECK(spawn_and_wait({"/usr/bin/python3", "-c", check}) == 3);
    }
  }
}
