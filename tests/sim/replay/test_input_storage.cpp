// Input pipeline, storage side and invariants: PFS reads share the file system's aggregate
// bandwidth among all nodes both when every rank is simulated and under the node-0 shortcut (the
// mirror readers). That `source: memory` leaves every output byte-identical to the engine before
// the pipeline existed is test_input_golden.cpp.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;

namespace {

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
}
