// Compute noise and stragglers in the LLM pipeline job (sim/pipeline_job.hpp, "Variability"), on
// small platforms built in the test (ideal network, no latency): every DP replica simulated, the
// iteration paced by the slowest replica, a TP group by its slowest rank, a DP collective waiting
// for the replica that launches it last, and the replica machinery giving the symmetric job's
// numbers when the ranks are alike.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/engine_setup.hpp"
#include "sim/pipeline_job.hpp"
#include "sim/variability.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast;
using namespace scalecast::sim;
using namespace scalecast::sim::testing;

namespace {

constexpr double kTf = 1e-3, kTb = 2e-3;

// tp x pp x dp ranks, m micro-batches per pipeline, every chunk tf forward and tb backward per
// micro-batch, no p2p bytes; `first_node` onwards, `gpus_per_node` ranks per node.
PipelineJobSpec job(const char* name, int tp, int pp, int dp, int m, int first_node,
                    int gpus_per_node) {
  PipelineJobSpec s;
  s.name = name;
  s.parallel.tp = tp;
  s.parallel.pp = pp;
  s.parallel.dp = dp;
  s.parallel.micro_batch = 1;
  s.parallel.global_batch = static_cast<std::int64_t>(m) * dp;
  for (int c = 0; c < pp; ++c) {
    PricedChunk pc;
    pc.forward.push_back({kTf, {}});
    pc.backward.push_back({kTb, {}});
    s.chunks.push_back(pc);
  }
  for (int n = 0; n < tp * pp * dp / gpus_per_node; ++n) s.nodes.push_back(first_node + n);
  s.gpus_per_node = gpus_per_node;
  s.warmup = 1;
  s.iterations = 3;
  return s;
}

// A seed under which exactly one of `ranks` ranks is a straggler at `fraction`; that rank.
std::pair<std::uint64_t, int> one_straggler(int ranks, double fraction) {
  for (std::uint64_t seed = 1;; ++seed) {
    const Variability v{0.0, fraction, 2.0, seed};
    int count = 0, which = -1;
    for (int r = 0; r < ranks; ++r)
      if (v.straggler(r)) ++count, which = r;
    if (count == 1) return {seed, which};
  }
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("pipeline variability: the iteration waits for the slowest DP replica") {
    // pp 1, dp 4 on four nodes, no communication: each replica computes m (tf + tb) stretched by
    // its rank's factor, and the iteration ends when the slowest has.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(no_latency(4, 1));
    const int m = 4;
    PipelineJobSpec s = job("noisy", 1, 1, 4, m, 0, 1);
    s.variability = {0.2, 0.0, 1.0, 7};
    PipelineJob pj(platform, s);
    engine->run();
    const PipelineResult r = pj.result();
    CHECK(r.replicas_simulated == 4);
    REQUIRE(r.iteration_times_s.size() == 3);
    double compute = 0.0, spread = 0.0;
    for (int i = 0; i < 3; ++i) {
      const int it = s.warmup + i;
      double slowest = 0.0, mean = 0.0;
      for (int rank = 0; rank < 4; ++rank) {
        slowest = std::max(slowest, s.variability.stretch(rank, it));
        mean += s.variability.stretch(rank, it) / 4;
      }
      INFO("iteration " << it);
      CHECK(r.iteration_times_s[static_cast<std::size_t>(i)] ==
            doctest::Approx(slowest * m * (kTf + kTb)).epsilon(1e-9));
      compute += mean * m * (kTf + kTb) / 3;
      spread += (slowest - mean) * m * (kTf + kTb) / 3;
    }
    // Not all alike: the draws differ between iterations and ranks.
    CHECK(r.iteration_times_s[0] != r.iteration_times_s[1]);
    // The breakdown is the mean over replicas: its compute, and the wait for the slowest at the
    // iteration's end as bubble; the terms add up.
    CHECK(r.stages[0].compute_s == doctest::Approx(compute).epsilon(1e-9));
    CHECK(r.stages[0].bubble_s == doctest::Approx(spread).epsilon(1e-9));
    CHECK(r.stages[0].total() == doctest::Approx(r.iteration_time_s).epsilon(1e-9));
  }

  TEST_CASE("pipeline variability: a TP group computes at its slowest rank's pace") {
    // tp 2 on one node, one replica: one actor stands for both ranks, stretched by the larger
    // factor of the two in each iteration.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(no_latency(1, 2));
    const auto [seed, straggler] = one_straggler(2, 0.5);
    PipelineJobSpec s = job("tp", 2, 1, 1, 2, 0, 2);
    s.variability = {0.1, 0.5, 3.0, seed};
    PipelineJob pj(platform, s);
    engine->run();
    const PipelineResult r = pj.result();
    CHECK(r.replicas_simulated == 1);
    CHECK(r.stragglers == 1);
    for (int i = 0; i < 3; ++i) {
      const int it = s.warmup + i;
      const double f = std::max(s.variability.stretch(0, it), s.variability.stretch(1, it));
      CHECK(f >= 3.0 * 0.5);  // the straggler's factor: 3 x a lognormal draw
      CHECK(r.iteration_times_s[static_cast<std::size_t>(i)] ==
            doctest::Approx(f * 2 * (kTf + kTb)).epsilon(1e-9));
    }
    (void)straggler;
  }

  TEST_CASE("pipeline variability: a straggler delays every replica's DP all-reduce") {
    // pp 1, dp 2 on two nodes, a gradient all-reduce after the backward: job "plain" without
    // variability, job "slow" (other nodes) with one of its two ranks three times slower. The
    // ring starts when the straggler launches it, so the iteration grows by 2 x its compute, and
    // the other replica sees that wait as exposed DP time.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(no_latency(4, 1));
    const auto [seed, straggler] = one_straggler(2, 0.5);
    const int m = 2;
    const double bytes = 500e6;
    std::vector<std::unique_ptr<PipelineJob>> jobs;
    for (const bool slow : {false, true}) {
      PipelineJobSpec s = job(slow ? "slow" : "plain", 1, 1, 2, m, slow ? 2 : 0, 1);
      s.chunks[0].dp_comms.push_back(
          {"grad_ar", models::CommGroup::kDp, models::CommKind::kAllReduce, bytes, 1, false});
      s.parallel.overlap_dp_comm = false;
      if (slow) s.variability = {0.0, 0.5, 3.0, seed};
      jobs.push_back(std::make_unique<PipelineJob>(platform, s));
    }
    engine->run();
    const PipelineResult plain = jobs[0]->result(), slow = jobs[1]->result();
    const double compute = m * (kTf + kTb);
    CHECK(slow.stragglers == 1);
    CHECK(slow.replicas_simulated == 2);
    CHECK(plain.replicas_simulated == 1);
    CHECK(slow.iteration_time_s ==
          doctest::Approx(plain.iteration_time_s + 2 * compute).epsilon(1e-9));
    // Mean over the two replicas: the fast one waits 2 x compute more at the all-reduce.
    CHECK(slow.stages[0].exposed_dp_s ==
          doctest::Approx(plain.stages[0].exposed_dp_s + compute).epsilon(1e-9));
    CHECK(slow.stages[0].compute_s == doctest::Approx(2 * compute).epsilon(1e-9));
    // Bytes on the wire are the job's, not counted once per simulated replica.
    CHECK(slow.bytes_per_iteration.at("dp") ==
          doctest::Approx(plain.bytes_per_iteration.at("dp")).epsilon(1e-12));
    (void)straggler;
  }

  TEST_CASE("pipeline variability: alike replicas give the symmetric job's numbers") {
    // pp 2, dp 2, 1F1B with a DP all-reduce overlapped with the backward: a noise so small that
    // every rank is alike simulates both replicas (their own stage actors and p2p) and must give
    // the one-replica job's iteration and breakdown.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(no_latency(8, 1));
    std::vector<std::unique_ptr<PipelineJob>> jobs;
    for (const bool varied : {false, true}) {
      PipelineJobSpec s = job(varied ? "replicas" : "one", 1, 2, 2, 4, varied ? 4 : 0, 1);
      for (PricedChunk& pc : s.chunks)
        pc.dp_comms.push_back(
            {"grad_ar", models::CommGroup::kDp, models::CommKind::kAllReduce, 50e6, 1, true});
      s.parallel.overlap_dp_comm = true;
      if (varied) s.variability = {1e-12, 0.0, 1.0, 3};
      jobs.push_back(std::make_unique<PipelineJob>(platform, s));
    }
    engine->run();
    const PipelineResult one = jobs[0]->result(), both = jobs[1]->result();
    CHECK(one.replicas_simulated == 1);
    CHECK(both.replicas_simulated == 2);
    CHECK(both.iteration_time_s == doctest::Approx(one.iteration_time_s).epsilon(1e-9));
    for (std::size_t st = 0; st < 2; ++st) {
      INFO("stage " << st);
      CHECK(both.stages[st].compute_s == doctest::Approx(one.stages[st].compute_s).epsilon(1e-9));
      CHECK(both.stages[st].bubble_s == doctest::Approx(one.stages[st].bubble_s).epsilon(1e-6));
      CHECK(both.stages[st].exposed_dp_s ==
            doctest::Approx(one.stages[st].exposed_dp_s).epsilon(1e-6));
    }
    CHECK(both.bytes_per_iteration == one.bytes_per_iteration);
    // The trace shows replica 0's stages only.
    for (const StageInterval& iv : both.intervals) CHECK(iv.stage < 2);
  }
}
