// Where flow and wave fidelity must differ (issue 18): a ring all-reduce paced by a contended
// edge uses its other edges only part of each step at flow fidelity (every step of every rank
// waits for the slowest edge), so a third job sharing one of those other edges gets more of it
// than at wave fidelity, where the ring's edge is one flow that takes its fair share throughout.
// Closed forms on the test platform (ideal network; backbones as fast as a NIC, B):
//   job X, ring over nodes {0, 1, 2}: edge 0->1 crosses backbone 0 up, 1->2 backbone 1 up,
//     2->0 backbone 1 down;
//   jobs Y1 {3, 4} and Y2 {5, 6}: 2-rank rings across backbone 0 (up and down), so X's 0->1 edge
//     gets B/3 and X's steps go at B/3;
//   job Z {7, 8}: a 2-rank ring across backbone 1 (up and down), beside X's other two edges.
// Flow: each X step lasts S/B (S/3 at B/3); its 1->2 flow (S/3) runs at B/2 for the first 2S/3B
// of it, then idles, and Z gets B/2 while it runs and B after. Z's steps (S/2 each edge): the
// first ends at 2S/3B + S/6B = 5S/6B; the second gets B until X's second step starts at S/B
// (S/6), then B/2 for the remaining S/3: it ends at S/B + 2S/3B = 5S/3B. Wave: X's 1->2 edge is one
// flow of 4S/3 at B/2 for longer than Z lives, so Z gets B/2: 2 S/B. Both copies run in one engine
// on disjoint nodes and backbones (flow on 0-8 / backbones 0-1, wave on 9-17 / backbones 2-3).

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;

namespace {

constexpr double kBytes = 256.0 * 1024 * 1024;

// All-reduce bound ring job: 10 ms forward, one gradient of kBytes from a backward op of no
// time, 1 ms optimizer; one GPU per node, one iteration.
JobSpec ring_job(const std::string& name, std::vector<int> nodes, Fidelity fidelity) {
  JobSpec s;
  s.name = name;
  s.nodes = std::move(nodes);
  s.gpus_per_node = 1;
  s.program = synthetic_program(1, 10e-3, 1, 0.0, kBytes, 1e-3);
  s.program.input_bytes = 0.0;
  s.allreduce.algorithm = Algorithm::kRing;
  s.allreduce.fusion_bytes = 1e12;
  s.fidelity = fidelity;
  s.warmup = 0;
  s.iterations = 1;
  return s;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("fidelity: a job beside a ring paced by a contended edge is faster at flow than wave") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 18;
    ps.backbones = 4;
    ps.backbone_bw = ps.nic_bw;
    ps.backbone = [](int a, int b) {
      const int copy = a / 9;
      if (b / 9 != copy) return -1;
      const int lo = std::min(a, b) % 9, hi = std::max(a, b) % 9;
      if ((lo == 0 && hi == 1) || (lo == 3 && hi == 4) || (lo == 5 && hi == 6)) return 2 * copy;
      if ((lo == 1 && hi == 2) || (lo == 0 && hi == 2) || (lo == 7 && hi == 8)) return 2 * copy + 1;
      return -1;
    };
    TestPlatform platform(ps);
    std::vector<std::unique_ptr<Job>> jobs;  // per copy: X, Y1, Y2, Z
    for (int copy = 0; copy < 2; ++copy) {
      const Fidelity f = copy == 0 ? Fidelity::kFlow : Fidelity::kWave;
      const int o = 9 * copy;
      const std::string tag = copy == 0 ? "flow_" : "wave_";
      jobs.push_back(std::make_unique<Job>(platform, ring_job(tag + "x", {o, o + 1, o + 2}, f)));
      jobs.push_back(std::make_unique<Job>(platform, ring_job(tag + "y1", {o + 3, o + 4}, f)));
      jobs.push_back(std::make_unique<Job>(platform, ring_job(tag + "y2", {o + 5, o + 6}, f)));
      jobs.push_back(std::make_unique<Job>(platform, ring_job(tag + "z", {o + 7, o + 8}, f)));
    }
    engine->run();
    const JobResult z_flow = jobs[3]->result(), z_wave = jobs[7]->result();
    const double s_over_b = kBytes / ps.nic_bw;
    MESSAGE("Z's all-reduce: flow " << z_flow.comm_total_s << " s (expected "
                                    << 5.0 / 3.0 * s_over_b << "), wave " << z_wave.comm_total_s
                                    << " s (expected " << 2.0 * s_over_b << ")");
    // Route latencies (a few us per step) are the only other terms.
    CHECK(z_flow.comm_total_s == doctest::Approx(5.0 / 3.0 * s_over_b).epsilon(0.01).scale(0.0));
    CHECK(z_wave.comm_total_s == doctest::Approx(2.0 * s_over_b).epsilon(0.01).scale(0.0));
    CHECK(z_wave.comm_total_s > 1.15 * z_flow.comm_total_s);
    // Without the contended neighbour the two fidelities agree (X's own time is set by its
    // B/3 edge at both: 4S/3 at B/3).
    const JobResult x_flow = jobs[0]->result(), x_wave = jobs[4]->result();
    CHECK(x_wave.comm_total_s == doctest::Approx(x_flow.comm_total_s).epsilon(0.02).scale(0.0));
  }
}
