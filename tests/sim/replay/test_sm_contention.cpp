// Collectives hold SMs (sim/compute_clock.hpp, sim/README.md "Collectives hold SMs"): the compute
// that overlaps an NCCL call runs on the SMs its channels leave. Closed forms of the clock, then
// the engine: one bucket overlapping a 1 s backward op on a GPU of 16 SMs with 4 channels, so
// the op ends 0.25 x the call's time later than without contention, and a job with contention
// off, side by side on other nodes, ends exactly on time; and Horovod's hierarchical calls, each
// holding its own communicator's channels. Each TEST_CASE is its own process.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <memory>
#include <stdexcept>

#include "calibration/collective_model.hpp"
#include "sim/compute_clock.hpp"
#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;

namespace {

// NCCL's view of `nodes` x `gpus` GPUs with `channels` channels.
std::shared_ptr<scalecast::calibration::CollectiveModel> nccl(int nodes, int gpus, int channels) {
  scalecast::calibration::NcclTopology t;
  t.ranks = nodes * gpus;
  t.nodes = nodes;
  t.compute_capability = 70;
  t.nvlink = true;
  t.intra_bw_GBps = 25.0;
  t.inter_bw_GBps = 12.5;
  t.channels = channels;
  return std::make_shared<scalecast::calibration::CollectiveModel>(t);
}

// 1 ms of forward work produces a gradient of `bytes`, then 1 s of backward work produces a
// 4-byte one: the first bucket's all-reduce overlaps the long op.
StepProgram overlapped_program(double bytes) {
  StepProgram p = synthetic_program(0, 0.0, 2, 0.0, bytes, 0.0);
  p.ops[0].duration_s = 1e-3;
  p.ops[1].duration_s = 1.0;
  p.gradients[1].bytes = 4.0;
  p.gpu_sms = 16;
  return p;
}

JobSpec contended_job(const std::string& name, int node, bool contention) {
  JobSpec s;
  s.name = name;
  s.nodes = {node};
  s.gpus_per_node = 2;
  s.program = overlapped_program(2.56e9);  // about 50 ms on the test links
  s.allreduce.algorithm = Algorithm::kRing;
  s.allreduce.fusion_bytes = 0.0;  // one bucket per tensor
  s.allreduce.sm_contention = contention;
  s.fidelity = Fidelity::kFlow;
  s.collectives = nccl(1, 2, 4);
  return s;
}

const Interval& find(const JobResult& r, int rank, const std::string& name) {
  for (const Interval& i : r.intervals)
    if (i.rank == rank && i.name == name) return i;
  throw std::runtime_error("no interval " + name);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("compute clock: full rate outside contention, 1 - share inside") {
    ComputeClock c;
    c.start(10.0);
    CHECK(c.wall_at(2.0) == doctest::Approx(12.0));
    c.contend(11.0, 13.0, 0.25);                      // 2 s at 0.75: 1.5 s of work
    CHECK(c.wall_at(0.5) == doctest::Approx(10.5));   // before it
    CHECK(c.wall_at(1.75) == doctest::Approx(12.0));  // 1 s, then 0.75 s at 0.75 in 1 s
    CHECK(c.wall_at(2.5) == doctest::Approx(13.0));   // 1 + 1.5: the interval's end
    CHECK(c.wall_at(4.0) == doctest::Approx(14.5));   // 0.5 s later than uncontended
    CHECK(c.lost_s(4.0) == doctest::Approx(0.5));
    // Work done before the interval ends loses only its share of what overlapped.
    CHECK(c.lost_s(1.0) == doctest::Approx(0.0));
    CHECK(c.lost_s(1.3) == doctest::Approx(0.1));  // 0.4 s of wall at 0.75 for 0.3 s of work
  }

  TEST_CASE("compute clock: a call holding every SM stops compute and bad intervals are refused") {
    ComputeClock c;
    c.start(0.0);
    c.contend(1.0, 3.0, 1.0);
    c.contend(3.0, 3.0, 0.5);  // empty: ignored
    c.contend(4.0, 5.0, 0.0);  // no share: ignored
    CHECK(c.wall_at(1.0) == doctest::Approx(1.0));
    CHECK(c.wall_at(1.5) == doctest::Approx(3.5));
    CHECK_THROWS_AS(c.contend(2.0, 6.0, 0.5), std::invalid_argument);  // overlaps the first
    CHECK_THROWS_AS(c.contend(7.0, 6.0, 0.5), std::invalid_argument);
    CHECK_THROWS_AS(c.contend(7.0, 8.0, 1.5), std::invalid_argument);
    CHECK_THROWS_AS(c.contend(7.0, 8.0, -0.1), std::invalid_argument);
    c.start(100.0);  // a new iteration forgets the old intervals
    CHECK(c.wall_at(2.0) == doctest::Approx(102.0));
  }

  TEST_CASE("an all-reduce holding 4 of 16 SMs delays the backward op it overlaps by 1/4 of it") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 2;
    ps.gpus = 2;
    TestPlatform platform(ps);
    Job on(platform, contended_job("on", 0, true));
    Job off(platform, contended_job("off", 1, false));
    engine->run();
    const JobResult a = on.result(), b = off.result();
    for (int rank : {0, 1}) {
      const Interval& call = find(a, rank, "allreduce.bucket0");
      const double t = call.end_s - call.start_s;
      INFO("rank " << rank << ": the first bucket's all-reduce took " << t << " s");
      REQUIRE(t > 0.01);
      REQUIRE(call.end_s < find(a, rank, "bwd1").end_s);  // it overlaps the long op
      CHECK(find(a, rank, "bwd1").end_s == doctest::Approx(1.001 + 0.25 * t).epsilon(1e-9));
      CHECK(find(b, rank, "bwd1").end_s == doctest::Approx(1.001).epsilon(1e-9));
    }
    // The iteration grows by as much: the small bucket after the op is the same in both.
    const double t0 =
        find(a, 0, "allreduce.bucket0").end_s - find(a, 0, "allreduce.bucket0").start_s;
    CHECK(a.iteration_time_s - b.iteration_time_s == doctest::Approx(0.25 * t0).epsilon(1e-6));
  }

  TEST_CASE("Horovod's hierarchical calls each hold their own communicator's channels") {
    // 2 nodes x 2 GPUs: the node's reduce-scatter and all-gather hold 4 of 16 SMs, the
    // all-reduce across nodes 1. The backward op's delay lies strictly between what the whole
    // bucket would cost at 1/16 and at 4/16: each stage counted with its own share.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 2;
    ps.gpus = 2;
    TestPlatform platform(ps);
    JobSpec s = contended_job("hierarchical", 0, true);
    s.nodes = {0, 1};
    s.allreduce.algorithm = Algorithm::kHierarchical;
    s.collectives = nccl(2, 2, 4);
    s.collectives_intra = nccl(1, 2, 4);
    s.collectives_inter = nccl(2, 1, 1);
    Job j(platform, s);
    engine->run();
    const JobResult r = j.result();
    const Interval& call = find(r, 0, "allreduce.bucket0");
    const double t = call.end_s - call.start_s;
    const double delay = find(r, 0, "bwd1").end_s - 1.001;
    INFO("bucket " << t << " s, backward op delayed " << delay << " s");
    REQUIRE(call.end_s < find(r, 0, "bwd1").end_s);
    CHECK(delay > t / 16.0 * 1.05);
    CHECK(delay < t * 4.0 / 16.0 * 0.95);
  }
}
