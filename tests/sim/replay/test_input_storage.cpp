// Input pipeline, storage side and invariants: PFS reads share the file system's aggregate
// bandwidth among all nodes both when every rank is simulated and under the node-0 shortcut (the
// mirror readers); `source: memory` leaves every output byte-identical to the engine before the
// pipeline existed (golden files and hashes in tests/sim/replay/data/memory-golden/).

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "tests/sim/replay/memory_golden.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_files.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;

namespace {

std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

const std::filesystem::path kGolden =
    std::filesystem::path(SCALECAST_SOURCE_DIR) / "tests/sim/replay/data/memory-golden";

// 8 nodes x 2 GPUs reading 64 MB batches from a PFS whose 4 GB/s aggregate link is the
// bottleneck: 16 ranks x 64 MB / 4 GB/s = 256 ms per batch, longer than the 41 ms of compute.
JobResult pfs_job(bool symmetric) {
  auto engine = create_engine({NetworkMode::kIdeal});
  TestPlatformSpec ps;
  ps.nodes = 8;
  ps.gpus = 2;
  ps.pfs_servers = 3;
  ps.pfs_aggregate_bw = 4e9;
  ps.pfs_disk_bw = 1e12;
  TestPlatform platform(ps);
  JobSpec s;
  for (int n = 0; n < ps.nodes; ++n) s.nodes.push_back(n);
  s.gpus_per_node = ps.gpus;
  s.program = synthetic_program(8, 1e-3, 16, 2e-3, 1e6, 1e-3, 32);
  s.program.input_bytes = 32 * 1e5;
  s.allreduce.algorithm = Algorithm::kHierarchical;
  s.allreduce.fusion_bytes = 1e12;
  s.fidelity = Fidelity::kWave;
  s.nic_groups = {0, 0};
  s.symmetric = symmetric;
  s.warmup = 3;
  s.iterations = 2;
  s.input.source = InputSource::kPfs;
  s.input.stored_bytes_per_sample = 2e6;
  Job job(platform, s);
  engine->run();
  return job.result();
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("input: PFS aggregate bandwidth is shared by every node with all ranks simulated") {
    const JobResult r = pfs_job(false);
    const double expected = 16 * 32 * 2e6 / 4e9;
    MESSAGE("iteration expected " << expected << " s (16 x 64 MB / 4 GB/s), actual "
                                  << r.iteration_time_s << " s; io_stall "
                                  << r.breakdown.io_stall_s);
    CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(0.002));
  }

  TEST_CASE("input: PFS under the node-0 shortcut still sees every node's reads") {
    const JobResult r = pfs_job(true);
    const double expected = 16 * 32 * 2e6 / 4e9;
    MESSAGE("iteration expected " << expected << " s (16 x 64 MB / 4 GB/s), actual "
                                  << r.iteration_time_s << " s; storage bytes per iteration "
                                  << r.bytes_per_iteration.at("storage"));
    CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(0.002));
    CHECK(r.bytes_per_iteration.at("storage") == doctest::Approx(16 * 32 * 2e6));
  }

  TEST_CASE("input: memory outputs equal the pre-pipeline engine's golden files") {
    if (const char* out = std::getenv("SCALECAST_GOLDEN_CASE_OUT")) {
      write_memory_golden_case(std::atoi(std::getenv("SCALECAST_GOLDEN_CASE")), out);
      return;
    }
    const auto base =
        std::filesystem::temp_directory_path() / ("scalecast-golden-" + std::to_string(::getpid()));
    const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
    for (int c = 0; c < kMemoryGoldenCases; ++c) {
      const auto dir = base / std::to_string(c);
      const std::string cmd = "SCALECAST_GOLDEN_CASE=" + std::to_string(c) +
                              " SCALECAST_GOLDEN_CASE_OUT=" + dir.string() + " " + exe +
                              " -tc='input: memory outputs equal*' > /dev/null";
      std::filesystem::create_directories(dir);
      REQUIRE(std::system(cmd.c_str()) == 0);
      for (const char* f : {"iterations.csv", "ops.csv", "trace.json", "point.json"}) {
        const std::string want = slurp(kGolden / std::to_string(c) / f), got = slurp(dir / f);
        INFO("case " << c << " " << f << ": golden " << want.size() << " bytes, now "
                     << got.size());
        CHECK(!want.empty());
        CHECK(got == want);
      }
    }
    std::filesystem::remove_all(base);
  }

  TEST_CASE("input: memory run of the default scenario keeps its golden bytes") {
    const auto base =
        std::filesystem::temp_directory_path() / ("scalecast-mem-" + std::to_string(::getpid()));
    const std::string cmd = std::string(SCALECAST_BINARY_DIR) +
                            "/cli/scalecast --quiet run scenarios/summit-resnet50.yaml --set "
                            "nodes=[1,2,16] --set iterations=1 -j 2 --out " +
                            base.string() + " > " + base.string() + ".txt";
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::ifstream table(kGolden / "summit-run.txt");
    std::string line;
    int checked = 0;
    while (std::getline(table, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      std::string file, hash;
      std::size_t size = 0;
      fields >> file >> size >> hash;
      std::string bytes =
          slurp(file == "stdout" ? std::filesystem::path(base.string() + ".txt") : base / file);
      if (file == "summary.json") bytes = bytes.substr(0, bytes.find("  \"tool\""));
      char now[17];
      std::snprintf(now, sizeof now, "%016llx", static_cast<unsigned long long>(fnv1a(bytes)));
      INFO(file << ": golden " << size << " bytes " << hash << ", now " << bytes.size() << " bytes "
                << now);
      CHECK(bytes.size() == size);
      CHECK(hash == now);
      ++checked;
    }
    CHECK(checked == 12);
    std::filesystem::remove_all(base);
    std::filesystem::remove(base.string() + ".txt");
  }
}
