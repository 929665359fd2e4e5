// The engine's NCCL all-reduce on shipped platform files against measured bus bandwidths
// (nccl-tests' busbw = 2(P-1)/P x bytes / time; docs/sources.md): one bucket of BERT-large's
// fp16 gradient after the backward pass, so the iteration's communication is that one call.
// These pin the two things the measurements show: an intra-node ring follows the NVLink mesh
// (sim/intra_rings.hpp; a DGX-1V ring in GPU-number order crossed PCIe and QPI and moved
// 15.7 GB/s), and one NCCL call's intra- and inter-node stages run at once, chunk by chunk, so
// the slower one sets the time (sim/README.md; summed, a DGX A100 pair moved 105 GB/s).
// Each TEST_CASE is its own process (one SimGrid engine each).

#include <doctest/doctest.h>

#include <simgrid/s4u.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "calibration/collective_model.hpp"
#include "platforms/data_dir.hpp"
#include "platforms/platform.hpp"
#include "sim/communicator.hpp"
#include "sim/engine_setup.hpp"
#include "sim/platform_builder.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_runner.hpp"
#include "tests/sim/replay/flat_cost_model.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;

namespace {

// BERT-large: 335,141,888 parameters (`scalecast describe model bert_large`), 2 bytes each.
constexpr double kBertFp16GradientBytes = 335141888.0 * 2.0;

// Time of the one all-reduce on `nodes` nodes of `platform`. `allreduce`: more keys of the
// scenario's allreduce block (", key: value"); `fidelity` empty: auto.
double allreduce_s(const std::string& platform, int nodes, int gpus, const std::string& allreduce,
                   const std::string& fidelity = "") {
  const Scenario s = load_scenario_text(
      "name: t\nplatform: " + platform +
          "\nmodel: bert_large\nprecision: fp16\nbatch_per_gpu: 1\nnodes: [" +
          std::to_string(nodes) + "]\ngpus_per_node: " + std::to_string(gpus) +
          "\nwarmup: 0\niterations: 1\n" +
          (fidelity.empty() ? "" : "fidelity: " + fidelity + "\n") +
          "allreduce: {fusion_buffer: 4GiB, after_backward: true" + allreduce + "}\n",
      "busbw.yaml");
  const JobResult r = run_point(s, PointRequest(nodes), FlatCostModel());
  REQUIRE(r.buckets_per_iteration == doctest::Approx(1.0));
  REQUIRE(r.comm_total_s > 0.0);
  return r.comm_total_s;
}

// Its bus bandwidth in GB/s.
double busbw_GBps(const std::string& platform, int nodes, int gpus, const std::string& allreduce,
                  const std::string& fidelity = "") {
  const double p = static_cast<double>(nodes) * gpus;
  return 2.0 * (p - 1.0) / p * kBertFp16GradientBytes /
         allreduce_s(platform, nodes, gpus, allreduce, fidelity) / 1e9;
}

// An engine and the first `nodes` nodes of a shipped platform built on it.
struct Built {
  std::unique_ptr<simgrid::s4u::Engine> engine;
  std::unique_ptr<MachinePlatform> platform;
  std::vector<simgrid::s4u::Host*> node0_gpus;  // the 8 GPUs of node 0
};
Built build(const std::string& name, int nodes) {
  Built b;
  b.engine = create_engine({NetworkMode::kCalibrated});
  BuildOptions options;
  options.nodes = nodes;
  b.platform = build_platform(*b.engine, scalecast::platforms::load_platform(name), options);
  for (int g = 0; g < 8; ++g) b.node0_gpus.push_back(b.platform->gpu(0, g));
  return b;
}

void check_within(double simulated, double measured, double tolerance) {
  INFO("simulated " << simulated << " GB/s, measured " << measured << " GB/s");
  CHECK(simulated == doctest::Approx(measured).epsilon(tolerance));
}

}  // namespace

TEST_SUITE("unit") {
  // vTrain's V100 table: a 1 GiB all-reduce on the 8 GPUs of a DGX-1V at 134.5 GB/s busbw, 0.9
  // of a GPU's six NVLinks [vTrain].
  TEST_CASE("measured busbw: DGX-1V, one node, over every NVLink of the cube-mesh") {
    check_within(busbw_GBps("dgx1-v100", 1, 8, ""), 134.5, 0.05);
  }

  // 48 GB/s all-reduce busbw between DGX-1s over their 4 EDR NICs [nccl-tests#29]; the same at
  // both fidelities.
  TEST_CASE("measured busbw: DGX-1V, two nodes over 4 x EDR (flow)") {
    check_within(busbw_GBps("dgx1-v100", 2, 8, "", "flow"), 48.0, 0.05);
  }
  TEST_CASE("measured busbw: DGX-1V, two nodes over 4 x EDR (wave)") {
    check_within(busbw_GBps("dgx1-v100", 2, 8, "", "wave"), 48.0, 0.05);
  }

  // The LLM job's communicators take the same rings: a tensor-parallel group of the 8 GPUs of
  // one DGX-1V all-reduces at the measured 134.5 GB/s too.
  TEST_CASE("measured busbw: an LLM communicator on the 8 GPUs of a DGX-1V") {
    const Built b = build("dgx1-v100", 1);
    const auto& hosts = b.node0_gpus;
    const Communicator tp(hosts, std::vector<int>(8, 0), 1.0, b.platform->gpu_link_unit_Bps(0));
    CHECK(tp.channels() == 6);
    double t = -1.0;
    simgrid::s4u::Actor::create("caller", hosts[0], [&] {
      CollectiveCall call = RingAllReduce().start(tp, kBertFp16GradientBytes);
      call.wait();
      t = call.done_at_s();
    });
    b.engine->run();
    check_within(2.0 * 7.0 / 8.0 * kBertFp16GradientBytes / t / 1e9, 134.5, 0.05);
  }

  // With NCCL's tuning model (as an LLM job sets it, Communicator::set_nccl) the same call on
  // one DGX H100 runs NVLS, NCCL's pick for a large buffer, at the data-parallel job's rate:
  // 480 GB/s bus bandwidth measured [nccl#1455]. And a 1 KiB reduce-scatter between two nodes
  // (one GPU each) waits NCCL's LL ring latency, 6.6 us + one network step of 2.7 us, where the
  // route alone (NIC, leaf, NIC) is about 3 us.
  TEST_CASE("an LLM communicator with NCCL's model: NVLS on a DGX H100, NCCL's latency") {
    const Built b = build("dgx-h100", 2);
    const auto& platform = b.platform;
    const auto& hosts = b.node0_gpus;
    const auto topology = [&](int nodes, int per_node) {
      return scalecast::calibration::nccl_topology(platform->description(), platform->node_type(0),
                                                   nodes, per_node, false);
    };
    Communicator tp(hosts, std::vector<int>(8, 0), 1.0, platform->gpu_link_unit_Bps(0));
    tp.set_nccl(topology(1, 8));
    Communicator dp({platform->gpu(0, 0), platform->gpu(1, 0)}, {0, 1});
    dp.set_nccl(topology(2, 1));
    double t = -1.0, small = -1.0;
    simgrid::s4u::Actor::create("caller", hosts[0], [&] {
      CollectiveCall call = RingAllReduce().start(tp, kBertFp16GradientBytes);
      call.wait();
      t = call.done_at_s();
      const double t0 = simgrid::s4u::Engine::get_clock();
      CollectiveCall rs = RingReduceScatter().start(dp, 1024.0);
      rs.wait();
      small = rs.done_at_s() - t0;
    });
    b.engine->run();
    check_within(2.0 * 7.0 / 8.0 * kBertFp16GradientBytes / t / 1e9, 480.0, 0.05);
    INFO("1 KiB reduce-scatter " << small << " s, route " << dp.ring_alpha_s() << " s");
    CHECK(dp.ring_alpha_s() < 9.3e-6);
    CHECK(small == doctest::Approx(9.3e-6).scale(0).epsilon(0.02));
  }

  // About 230 GB/s on the NVSwitch of one DGX A100 [nccl-tests#149].
  TEST_CASE("measured busbw: DGX A100, one node") {
    check_within(busbw_GBps("dgx-a100-80gb", 1, 8, ""), 230.0, 0.05);
  }

  // 192 GB/s between DGX A100s over their 8 HDR200 NICs [nccl#1576]: the NICs, the slower
  // stage, set the time; the NVSwitch stages run under them.
  TEST_CASE("measured busbw: DGX A100, two nodes over 8 x HDR200") {
    check_within(busbw_GBps("dgx-a100-80gb", 2, 8, ""), 192.0, 0.05);
  }

  // One DGX H100 [nccl#1455]: NCCL's ring reaches 365-370 GB/s bus bandwidth on the NVSwitch,
  // NVLS (NVLink SHARP, reduction in the switch, NCCL's choice for large buffers) 480.
  TEST_CASE("measured busbw: DGX H100, one node, ring") {
    check_within(busbw_GBps("dgx-h100", 1, 8, ", algorithm: ring"), 367.5, 0.05);
  }
  TEST_CASE("measured busbw: DGX H100, one node, NCCL's choice (NVLS)") {
    check_within(busbw_GBps("dgx-h100", 1, 8, ""), 480.0, 0.05);
  }

  // NVLS on 4 of the 8 GPUs: its volume, 5/4 of the buffer each way against the ring's 6/4, with
  // the switch efficiency measured on 8 (480 / (367.5 x 14/9)) gives about the ring's rate.
  TEST_CASE("NVLS on 4 GPUs of a DGX H100 is about as fast as the ring") {
    const double efficiency = 480.0 / (367.5 * 14.0 / 9.0);
    check_within(busbw_GBps("dgx-h100", 1, 4, ", algorithm: nvls"), 367.5 * 6.0 / 5.0 * efficiency,
                 0.05);
  }

  // Out of sample: an H800 node has 8 NVLinks per GPU instead of 18 (200 GB/s each way), and
  // NCCL's NVLS all-reduce reached 215 GB/s bus bandwidth on 8 of them [nccl#1374]. The switch
  // efficiency comes from the H100 measurement above only.
  TEST_CASE("measured busbw: an H800 node (8 NVLinks per GPU), NVLS") {
    std::ifstream in(scalecast::platforms::find_data_file("platforms/dgx-h100.yaml"));
    REQUIRE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    std::string yaml = text.str();
    const std::string links = "count: 18 ";
    const auto at = yaml.find(links);
    REQUIRE(at != std::string::npos);
    yaml.replace(at, links.size(), "count: 8  ");
    const auto dir =
        std::filesystem::temp_directory_path() / ("scalecast_h800_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto platform = dir / "h800.yaml";
    std::ofstream(platform) << yaml;
    std::filesystem::copy_file(scalecast::platforms::find_data_file("platforms/gpus.yaml"),
                               dir / "gpus.yaml");
    const double nvls = busbw_GBps(platform.string(), 1, 8, ", algorithm: nvls");
    std::filesystem::remove_all(dir);
    check_within(nvls, 215.0, 0.05);
  }

  // Horovod's hierarchical all-reduce is three NCCL calls one after the other: reduce-scatter
  // and all-gather in the node, 2(g-1)/g of the buffer through each GPU's NVSwitch port at
  // 0.77 x 300 GB/s, and between them an all-reduce of the 1/8 shard over a ring of the 2 nodes
  // through each HDR200 NIC at 0.96 x 25 GB/s (platforms/dgx-a100-80gb.yaml): their times add
  // up (5.08 + 3.49 ms), where one NCCL call would take the larger.
  TEST_CASE("Horovod's hierarchical stages on two DGX A100 add up") {
    const double s = kBertFp16GradientBytes;
    const double intra = 2.0 * 7.0 / 8.0 * s / (0.77 * 300e9);
    const double inter = 2.0 * (2 - 1) / 2.0 * (s / 8.0) / (0.96 * 25e9);
    const double t = allreduce_s("dgx-a100-80gb", 2, 8, ", algorithm: hierarchical");
    INFO("hierarchical " << t << " s, stages " << intra << " + " << inter << " s");
    CHECK(t == doctest::Approx(intra + inter).epsilon(0.03));
  }
}
