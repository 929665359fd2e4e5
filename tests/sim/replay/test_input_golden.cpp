// Golden outputs (ctest label golden): with `source: memory` the replay must leave every output
// byte-identical to what the engine wrote before the input pipeline existed: three engine-level
// cases (tests/sim/replay/memory_golden.hpp) and `scalecast run` of the default scenario at 1, 2
// and 16 nodes. The reference files are plain text in tests/sim/replay/data/memory-golden/, so a
// failure names the first differing line; they change only through
// scripts/update_input_golden.sh, with the diff reviewed and the reason in the commit.

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/sim/replay/golden_diff.hpp"
#include "tests/sim/replay/memory_golden.hpp"
#include "tests/sim/replay/test_files.hpp"

using namespace scalecast::sim::testing;

namespace {

const std::filesystem::path kGolden =
    std::filesystem::path(SCALECAST_SOURCE_DIR) / "tests/sim/replay/data/memory-golden";

// Compares one output with its golden file; the output folder is kept when they differ, for
// `diff -r`.
bool same_as_golden(const std::filesystem::path& golden, const std::string& now,
                    const std::filesystem::path& output) {
  const std::string want = slurp(golden);
  INFO("golden " << golden.string() << " (" << want.size() << " bytes), output " << output.string()
                 << " (" << now.size() << " bytes)");
  CHECK_MESSAGE(!want.empty(), "golden file missing or empty");
  const std::string diff = first_difference(want, now);
  CHECK_MESSAGE(diff.empty(), diff);
  return !want.empty() && diff.empty();
}

}  // namespace

TEST_SUITE("golden") {
  TEST_CASE("input: memory outputs equal the pre-pipeline engine's golden files") {
    if (const char* out = std::getenv("SCALECAST_GOLDEN_CASE_OUT")) {
      write_memory_golden_case(std::atoi(std::getenv("SCALECAST_GOLDEN_CASE")), out);
      return;
    }
    const auto base =
        std::filesystem::temp_directory_path() / ("scalecast-golden-" + std::to_string(::getpid()));
    const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    bool all_same = true;
    for (int c = 0; c < kMemoryGoldenCases; ++c) {
      const auto dir = base / std::to_string(c);
      const std::string cmd = "SCALECAST_GOLDEN_CASE=" + std::to_string(c) +
                              " SCALECAST_GOLDEN_CASE_OUT=" + dir.string() + " " + exe +
                              " -tc='input: memory outputs equal*' > /dev/null";
      std::filesystem::create_directories(dir);
      REQUIRE(std::system(cmd.c_str()) == 0);
      for (const char* f : {"iterations.csv", "ops.csv", "trace.json", "point.json"}) {
        all_same &= same_as_golden(kGolden / std::to_string(c) / f, slurp(dir / f), dir / f);
      }
    }
    if (all_same) std::filesystem::remove_all(base);
  }

  TEST_CASE("input: memory run of the default scenario keeps its golden files") {
    const auto base =
        std::filesystem::temp_directory_path() / ("scalecast-mem-" + std::to_string(::getpid()));
    const std::string cmd = kTool +
                            " --quiet run scenarios/summit-resnet50.yaml --set "
                            "nodes=[1,2,16] --set iterations=1 -j 2 --out " +
                            (base / "run").string() + " > " + (base / "stdout.txt").string();
    std::filesystem::create_directories(base);
    REQUIRE(std::system(cmd.c_str()) == 0);
    bool all_same = true;
    // summary.json is compared up to its "tool" key (version and git hash of the build).
    const std::string summary = slurp(base / "run/summary.json");
    all_same &=
        same_as_golden(kGolden / "summit-run/summary.json",
                       summary.substr(0, summary.find("  \"tool\"")), base / "run/summary.json");
    all_same &= same_as_golden(kGolden / "summit-run/stdout.txt", slurp(base / "stdout.txt"),
                               base / "stdout.txt");
    all_same &= same_as_golden(kGolden / "summit-run/scenario.resolved.yaml",
                               slurp(base / "run/scenario.resolved.yaml"),
                               base / "run/scenario.resolved.yaml");
    for (const char* n : {"nodes-1", "nodes-2", "nodes-16"}) {
      for (const char* f : {"iterations.csv", "ops.csv", "trace.json"}) {
        const auto rel = std::filesystem::path(n) / f;
        all_same &= same_as_golden(kGolden / "summit-run" / rel, slurp(base / "run" / rel),
                                   base / "run" / rel);
      }
    }
    if (all_same) std::filesystem::remove_all(base);
  }
}
