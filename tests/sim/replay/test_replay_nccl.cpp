// The replay engine under NCCL's tuning model (calibration/collective_model.hpp): protocol
// efficiency on the wire, NCCL's latency beyond the routes', per-bucket choices at both
// fidelities, and measured all-reduces from a calibration database. Each TEST_CASE is its own
// process (one SimGrid engine each).

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <memory>
#include <string>

#include "calibration/collective_model.hpp"
#include "sim/collective_config.hpp"
#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_runner.hpp"
#include "tests/sim/replay/flat_cost_model.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;
namespace cal = scalecast::calibration;

namespace {

std::vector<int> range(int from, int count) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(from + i);
  return v;
}

// NCCL's view of the test platform's nodes: Volta-like, NVLink inside, one 12.5 GB/s NIC.
std::shared_ptr<cal::CollectiveModel> model(int nodes, int gpus) {
  cal::NcclTopology t;
  t.nodes = nodes;
  t.ranks = nodes * gpus;
  t.compute_capability = 70;
  t.nvlink = true;
  t.nic_near_gpu = true;
  t.intra_bw_GBps = 50.0;
  t.inter_bw_GBps = 12.5;
  t.channels = 2;
  return std::make_shared<cal::CollectiveModel>(t);
}

JobSpec job(const std::string& name, std::vector<int> nodes, int gpus, double bytes, Algorithm algo,
            Fidelity fid) {
  JobSpec s;
  s.name = name;
  s.nodes = std::move(nodes);
  s.gpus_per_node = gpus;
  s.program = synthetic_program(0, 0.0, 1, 0.0, bytes, 0.0);
  s.allreduce.algorithm = algo;
  s.allreduce.fusion_bytes = 1e12;
  s.fidelity = fid;
  return s;
}

// ResNet-50's fp16 gradient (one 64 MiB fusion bucket) on 2 nodes of the DGX H100 SuperPOD,
// whose fabric has SHARP (network.sharp: true).
JobResult superpod_point(const std::string& collnet) {
  const Scenario s = load_scenario_text(
      "name: t\nplatform: dgx-h100-superpod\nmodel: resnet50\nprecision: fp16\n"
      "batch_per_gpu: 64\nnodes: [2]\nwarmup: 0\niterations: 1\nfidelity: wave\n"
      "allreduce: {collnet: " +
          collnet + "}\n",
      "superpod.yaml");
  return run_point(s, PointRequest(2), FlatCostModel());
}

// One 64 MiB bucket, ring/Simple by NCCL's choice, on 4 nodes of 4 GPUs at fidelity `fid`.
void check_flat_ring_volume(Fidelity fid) {
  auto engine = create_engine({NetworkMode::kIdeal});
  TestPlatformSpec ps;
  ps.nodes = 4;
  ps.gpus = 4;
  TestPlatform platform(ps);
  const double bytes = 64.0 * 1024 * 1024;
  JobSpec s = job("ring", range(0, 4), 4, bytes, Algorithm::kAuto, fid);
  s.collectives = model(4, 4);
  s.allreduce.protocol = cal::NcclProto::kSimple;
  Job j(platform, s);
  engine->run();
  const JobResult r = j.result();
  REQUIRE(r.collective_choices.at("ring/simple") == 1.0);
  CHECK(flat_ring_inter_node_volume(4, 16) == doctest::Approx(1.25));
  CHECK(r.bytes_per_iteration.at("inter_node") ==
        doctest::Approx(4 * 2.0 * 15 / 16 * bytes).epsilon(1e-9).scale(0.0));
  // The NIC-bound part alone: 2(P-1)/P of the bucket through one NIC.
  CHECK(r.comm_total_s > 2.0 * 15 / 16 * bytes / ps.nic_bw);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("nccl model: LL doubles a ring's wire bytes and NCCL's latency is added once") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 16;
    TestPlatform platform(ps);
    const double bytes = 16.0 * 1024 * 1024;
    JobSpec simple = job("simple", range(0, 8), 1, bytes, Algorithm::kRing, Fidelity::kWave);
    simple.collectives = model(8, 1);
    simple.allreduce.protocol = cal::NcclProto::kSimple;
    JobSpec ll = simple;
    ll.name = "ll";
    ll.nodes = range(8, 8);
    ll.allreduce.protocol = cal::NcclProto::kLL;
    Job js(platform, simple), jl(platform, ll);
    engine->run();
    const double alpha = 2 * ps.gpu_link_lat_s + 2 * ps.nic_lat_s;
    const double route_latency = 2.0 * 7 * alpha;
    for (auto [j, proto, wire] : {std::tuple{&js, cal::NcclProto::kSimple, 1.0},
                                  std::tuple{&jl, cal::NcclProto::kLL, 2.0}}) {
      const JobResult r = j->result();
      const double nccl_latency = model(8, 1)->choose(bytes, cal::NcclAlgo::kRing, proto).latency_s;
      const double expected = ring_allreduce_s(8, wire * bytes, ps.nic_bw, alpha) +
                              std::max(0.0, nccl_latency - route_latency);
      INFO(r.name << ": expected " << expected << " s, actual " << r.iteration_time_s << " s");
      CHECK(nccl_latency > route_latency);  // the added term is not zero
      CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(0.01).scale(0.0));
      CHECK(r.bytes_per_iteration.at("inter_node") ==
            doctest::Approx(8 * 2.0 * 7 / 8 * wire * bytes).epsilon(1e-9).scale(0.0));
      CHECK(r.collective_tier == "datasheet");
      CHECK(r.collective_choices.at(std::string("ring/") + std::string(cal::to_string(proto))) ==
            1.0);
    }
  }

  TEST_CASE("nccl model: flow and wave agree under per-bucket NCCL choices") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 8;
    ps.gpus = 4;
    TestPlatform platform(ps);
    JobSpec flow;
    flow.name = "flow";
    flow.nodes = range(0, 4);
    flow.gpus_per_node = 4;
    // Buckets of different sizes, so that NCCL's choice varies between them.
    flow.program = synthetic_program(10, 1e-3, 20, 2e-3, 3e6, 1e-3);
    flow.allreduce.fusion_bytes = 10e6;
    flow.fidelity = Fidelity::kFlow;
    flow.collectives = model(4, 4);
    JobSpec wave = flow;
    wave.name = "wave";
    wave.nodes = range(4, 4);
    wave.fidelity = Fidelity::kWave;
    Job jf(platform, flow), jw(platform, wave);
    engine->run();
    const JobResult f = jf.result(), w = jw.result();
    INFO("flow " << f.comm_total_s << " s, wave " << w.comm_total_s << " s");
    CHECK(f.comm_total_s > 0.0);
    CHECK(w.iteration_time_s == doctest::Approx(f.iteration_time_s).epsilon(0.02).scale(0.0));
    CHECK(w.comm_total_s == doctest::Approx(f.comm_total_s).epsilon(0.02).scale(0.0));
    CHECK(f.collective_choices == w.collective_choices);
    CHECK_FALSE(f.collective_choices.empty());
  }

  // NCCL's ring runs over all P GPUs, so each node's NIC carries 2(P-1)/P of the bucket
  // (nccl-tests doc/PERFORMANCE.md); the job's pattern (a ring of nodes per local rank) moves
  // 2(N-1)/N unless its flows carry the difference. 4 nodes of 4 GPUs: 1.875 S, not 1.5 S.
  TEST_CASE("nccl model: a ring bucket across nodes moves NCCL's flat-ring volume per NIC (flow)") {
    check_flat_ring_volume(Fidelity::kFlow);
  }
  TEST_CASE("nccl model: a ring bucket across nodes moves NCCL's flat-ring volume per NIC (wave)") {
    check_flat_ring_volume(Fidelity::kWave);
  }

  TEST_CASE("nccl model: the flat ring's NIC volume against a ring of nodes") {
    CHECK(flat_ring_inter_node_volume(2, 2) == doctest::Approx(1.0));  // one GPU per node
    CHECK(flat_ring_inter_node_volume(2, 12) == doctest::Approx((11.0 / 12) / 0.5));
    CHECK(flat_ring_inter_node_volume(4608, 27648) == doctest::Approx(1.0).epsilon(1e-3));
    CHECK_THROWS_AS(flat_ring_inter_node_volume(1, 8), std::invalid_argument);
    CHECK_THROWS_AS(flat_ring_inter_node_volume(4, 3), std::invalid_argument);
  }

  TEST_CASE("nccl model: measured all-reduces change the predicted time and report their tier") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 16;
    TestPlatform platform(ps);
    const double bytes = 64.0 * 1024 * 1024;
    // Synthetic database: ring all-reduce on 8 ranks over 8 nodes at 2 GB/s and 100 us.
    std::string text =
        "format: scalecast-calibration\nversion: 1\nsources:\n"
        "  - {id: s, device: v100-sxm2, backend: cuda, date: \"2026-01-01\"}\nentries:\n";
    for (long long b : {1000000LL, 10000000LL, 100000000LL})
      text +=
          "  - {source: s, device: v100-sxm2, op: collective, pass: all_reduce, dtype: fp32, "
          "select: fixed, dims: {bytes: " +
          std::to_string(b) +
          ", ranks: 8, nodes: 8}, median_s: " + std::to_string(100e-6 + b / 2e9) +
          ", algo: ring}\n";
    const cal::Database db = cal::parse_database(text, "synthetic.yaml");
    auto measured = model(8, 1);
    REQUIRE(measured->use_measurements(db, "v100-sxm2") == 1);
    JobSpec a = job("datasheet", range(0, 8), 1, bytes, Algorithm::kRing, Fidelity::kWave);
    a.collectives = model(8, 1);
    JobSpec b = a;
    b.name = "measured";
    b.nodes = range(8, 8);
    b.collectives = measured;
    Job ja(platform, a), jb(platform, b);
    engine->run();
    const JobResult ra = ja.result(), rb = jb.result();
    INFO("datasheet " << ra.iteration_time_s << " s, measured " << rb.iteration_time_s << " s");
    CHECK(ra.collective_tier == "datasheet");
    CHECK(rb.collective_tier == "measured");
    // The flows carry bytes x (datasheet Simple bandwidth / measured bandwidth): on the ideal test
    // links the measured line, 100 us + S / 2 GB/s, within the route latency it already has.
    const double expected = 100e-6 + bytes / 2e9;
    CHECK(rb.iteration_time_s == doctest::Approx(expected).epsilon(0.03).scale(0.0));
    CHECK(rb.iteration_time_s > 1.5 * ra.iteration_time_s);
  }

  TEST_CASE("nccl model: an NCCL-only algorithm without the model is refused") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 2;
    TestPlatform platform(ps);
    JobSpec s = job("nvls", range(0, 2), 1, 1e6, Algorithm::kNvls, Fidelity::kWave);
    CHECK_THROWS_WITH_AS(Job(platform, s), doctest::Contains("needs the NCCL collective model"),
                         std::invalid_argument);
  }

  // NCCL v2.21.5-1 src/init.cc: collNetSupport only with NCCL_COLLNET_ENABLE=1, unset by default.
  TEST_CASE("nccl model: SHARP in the fabric is not used unless CollNet is enabled") {
    const JobResult r = superpod_point("false");
    CHECK(r.collective_choices.count("nvls_tree/simple") == 1);
    CHECK(r.collective_choices.count("nvls/simple") == 0);
  }

  TEST_CASE("nccl model: with CollNet enabled a SHARP fabric reduces in the network") {
    const JobResult r = superpod_point("true");
    CHECK(r.collective_choices.count("nvls/simple") == 1);
    CHECK(r.collective_choices.count("nvls_tree/simple") == 0);
  }
}
