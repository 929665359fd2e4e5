// NCCL's double binary tree (sim/double_binary_tree.hpp) as a graph, and the tree all-reduce the
// engine builds on it against its closed form at both fidelities. Each TEST_CASE is its own
// process (one SimGrid engine each).

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <string>
#include <vector>

#include "sim/double_binary_tree.hpp"
#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "sim/job_state.hpp"
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

JobSpec job(const std::string& name, std::vector<int> nodes, double bytes, Algorithm algo,
            Fidelity fid) {
  JobSpec s;
  s.name = name;
  s.nodes = std::move(nodes);
  s.gpus_per_node = 1;
  s.program = synthetic_program(0, 0.0, 1, 0.0, bytes, 0.0);
  s.allreduce.algorithm = algo;
  s.allreduce.fusion_bytes = 1e12;
  s.fidelity = fid;
  return s;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("double binary tree: two spanning trees, each rank inner in at most one") {
    // ncclGetBtree for 8 ranks (src/graph/trees.cc's comment draws it): 0 -> 4; 4 -> 2, 6;
    // 2 -> 1, 3; 6 -> 5, 7. The second tree is its mirror (n even).
    CHECK(nccl_btree(8, 0).children[1] == 4);
    CHECK(nccl_btree(8, 4).parent == 0);
    CHECK(nccl_btree(8, 6).children == std::array<int, 2>{5, 7});
    CHECK(nccl_double_tree(8, 7)[1].children[1] == 3);  // mirror of 0 -> 4
    CHECK(nccl_double_tree(8, 3)[1].parent == 7);
    for (int n = 1; n <= 300; ++n)
      for (int t = 0; t < 2; ++t) {
        int roots = 0, both_inner = 0, deepest = 0;
        for (int r = 0; r < n; ++r) {
          const auto links = nccl_double_tree(n, r);
          const TreeLinks& l = links[t];
          if (l.parent < 0)
            ++roots;
          else {
            const std::array<int, 2> pc = nccl_double_tree(n, l.parent)[t].children;
            CHECK_MESSAGE((pc[0] == r || pc[1] == r), "n " << n << " tree " << t << " rank " << r);
          }
          const auto inner = [](const TreeLinks& x) {
            return x.children[0] >= 0 || x.children[1] >= 0;
          };
          if (inner(links[0]) && inner(links[1])) ++both_inner;
          int depth = 0;
          for (int up = r; nccl_double_tree(n, up)[t].parent >= 0 && depth <= n;)
            up = nccl_double_tree(n, up)[t].parent, ++depth;
          deepest = std::max(deepest, depth);
        }
        INFO("n " << n << " tree " << t);
        CHECK(roots == 1);
        CHECK(deepest == nccl_tree_depth(n));
        // Each rank sends and receives about the buffer once per phase: at most one rank (the
        // first tree's root, whose shifted twin is inner for odd n) is inner in both trees.
        CHECK(both_inner <= (n % 2 == 1 ? 1 : 0));
      }
  }

  TEST_CASE("tree all-reduce matches 2S/B (1 + (h-1)/c) + 2h alpha at both fidelities") {
    // The closed form of NCCL's double binary tree (tuning.cc: algorithm bandwidth = bus
    // bandwidth / 2, so t = 2S/B; latency 2 log2(n) hops), plus the pipeline's fill of h - 1
    // chunk steps per phase (c chunks of NCCL's 512 KiB per tree).
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 80;
    TestPlatform platform(ps);
    const double bytes = 64.0 * 1024 * 1024;
    Job flow(platform, job("flow", range(0, 8), bytes, Algorithm::kTree, Fidelity::kFlow));
    Job wave(platform, job("wave", range(8, 8), bytes, Algorithm::kTree, Fidelity::kWave));
    Job ring(platform, job("ring", range(16, 16), bytes, Algorithm::kRing, Fidelity::kWave));
    Job tree16(platform, job("tree16", range(32, 16), bytes, Algorithm::kTree, Fidelity::kWave));
    // Past kMaxTreeEdgeMembers the wave posts one flow per member to the next, same bytes.
    Job wide(platform, job("wide", range(48, 32), bytes, Algorithm::kTree, Fidelity::kWave));
    engine->run();
    const double alpha = 2 * ps.gpu_link_lat_s + 2 * ps.nic_lat_s;
    const int h = nccl_tree_depth(8), c = 64;  // 32 MiB per tree / 512 KiB
    const double expected = 2 * bytes / ps.nic_bw * (1.0 + double(h - 1) / c) + 2 * h * alpha;
    for (const Job* j : {&flow, &wave}) {
      const JobResult r = j->result();
      INFO(r.name << ": expected " << expected << " s, actual " << r.iteration_time_s << " s");
      CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(0.02).scale(0.0));
      // Each rank sends the buffer once up (both trees) and once down, roots excepted.
      CHECK(r.bytes_per_iteration.at("inter_node") ==
            doctest::Approx(2.0 * 8 * bytes - 2 * bytes).epsilon(1e-9).scale(0.0));
    }
    {
      const int hw = nccl_tree_depth(32);
      const double expected_wide =
          2 * bytes / ps.nic_bw * (1.0 + double(hw - 1) / c) + 2 * hw * alpha;
      const JobResult r = wide.result();
      INFO("32 ranks: expected " << expected_wide << " s, actual " << r.iteration_time_s << " s");
      CHECK(32 > kMaxTreeEdgeMembers);
      CHECK(r.iteration_time_s == doctest::Approx(expected_wide).epsilon(0.02).scale(0.0));
      CHECK(r.bytes_per_iteration.at("inter_node") ==
            doctest::Approx(2.0 * 32 * bytes - 2 * bytes).epsilon(1e-9).scale(0.0));
    }
    // About ring bandwidth (2(n-1)/n S/B): the single pipelined tree it replaces took more than
    // twice the ring's time (an inner rank received 2S per phase).
    const double t_ring = ring.result().iteration_time_s, t_tree = tree16.result().iteration_time_s;
    INFO("16 ranks: ring " << t_ring << " s, tree " << t_tree << " s");
    CHECK(t_tree < 1.15 * t_ring);
    CHECK(t_tree > 1.0 * t_ring);
  }
}
