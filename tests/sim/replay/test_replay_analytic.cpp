// Analytic checks of the replay engine on small platforms built in the test (ideal network).
// Each TEST_CASE is its own process (one SimGrid engine each); several jobs on disjoint nodes of
// one platform run side by side without sharing a link.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;

namespace {

std::vector<int> range(int from, int count) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(from + i);
  return v;
}

JobSpec job(const std::string& name, std::vector<int> nodes, int gpus, StepProgram program,
            Algorithm algo, Fidelity fid) {
  JobSpec s;
  s.name = name;
  s.nodes = std::move(nodes);
  s.gpus_per_node = gpus;
  s.program = std::move(program);
  s.allreduce.algorithm = algo;
  s.allreduce.fusion_bytes = 1e12;
  s.fidelity = fid;
  return s;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("ring all-reduce matches 2(n-1)/n S/B + 2(n-1) alpha at both fidelities") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 16;
    TestPlatform platform(ps);
    const double bytes = 64.0 * 1024 * 1024;
    // Zero compute: one backward op of no duration produces the one gradient.
    StepProgram p = synthetic_program(0, 0.0, 1, 0.0, bytes, 0.0);
    Job flow(platform, job("flow", range(0, 8), 1, p, Algorithm::kRing, Fidelity::kFlow));
    Job wave(platform, job("wave", range(8, 8), 1, p, Algorithm::kRing, Fidelity::kWave));
    engine->run();
    const double alpha = 2 * ps.gpu_link_lat_s + 2 * ps.nic_lat_s;
    const double expected = ring_allreduce_s(8, bytes, ps.nic_bw, alpha);
    for (const Job* j : {&flow, &wave}) {
      const JobResult r = j->result();
      INFO(r.name << ": expected " << expected << " s, actual " << r.iteration_time_s << " s");
      CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(0.01).scale(0.0));
      // Compute zero: the iteration is the all-reduce, all of it exposed.
      CHECK(r.comm_total_s == doctest::Approx(r.iteration_time_s).epsilon(1e-9).scale(0.0));
      CHECK(r.breakdown.exposed_comm_s ==
            doctest::Approx(r.iteration_time_s).epsilon(1e-9).scale(0.0));
      CHECK(r.bytes_per_iteration.at("inter_node") ==
            doctest::Approx(8 * 2.0 * 7 / 8 * bytes).epsilon(1e-9).scale(0.0));
    }
  }

  TEST_CASE("with compute zero the iteration equals the all-reduce time") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 4;
    ps.gpus = 4;
    TestPlatform platform(ps);
    const double bytes = 32.0 * 1024 * 1024;
    StepProgram p = synthetic_program(0, 0.0, 1, 0.0, bytes, 0.0);
    // One node, four GPUs: a ring over the GPUs' private links (alpha = two GPU links).
    Job j(platform, job("one_node", {0}, 4, p, Algorithm::kRing, Fidelity::kFlow));
    engine->run();
    const JobResult r = j.result();
    const double expected = ring_allreduce_s(4, bytes, ps.gpu_link_bw, 2 * ps.gpu_link_lat_s);
    INFO("expected " << expected << " s, actual " << r.iteration_time_s << " s");
    CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(0.01).scale(0.0));
    CHECK(r.breakdown.compute_s == doctest::Approx(0.0));
    CHECK(r.bytes_per_iteration.at("intra_node") > 0.0);
    CHECK(r.bytes_per_iteration.at("inter_node") == 0.0);
  }

  TEST_CASE("with communication free the iteration equals the sum of compute") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 4;
    ps.gpus = 2;
    ps.gpu_link_bw = ps.nic_bw = 1e20;
    ps.gpu_link_lat_s = ps.nic_lat_s = 0.0;
    TestPlatform platform(ps);
    StepProgram p = synthetic_program(10, 2e-3, 20, 3e-3, 4e6, 1.5e-3);
    JobSpec s = job("free", range(0, 4), 2, p, Algorithm::kHierarchical, Fidelity::kFlow);
    s.allreduce.fusion_bytes = 16e6;
    s.iterations = 2;
    Job j(platform, s);
    engine->run();
    const JobResult r = j.result();
    const double expected = total_op_time_s(p);
    INFO("expected " << expected << " s, actual " << r.iteration_time_s << " s");
    CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(1e-6).scale(0.0));
    CHECK(r.buckets_per_iteration == doctest::Approx(5.0));
    CHECK(r.gpu_utilization == doctest::Approx(1.0).epsilon(1e-6).scale(0.0));
  }
}
