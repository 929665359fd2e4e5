// The engine's NCCL all-reduce on shipped platform files against measured bus bandwidths
// (nccl-tests' busbw = 2(P-1)/P x bytes / time; docs/sources.md): one bucket of BERT-large's
// fp16 gradient after the backward pass, so the iteration's communication is that one call.
// These pin what the measurements show: an intra-node ring follows the NVLink mesh
// (sim/intra_rings.hpp; a DGX-1V ring in GPU-number order crossed PCIe and QPI and moved
// 15.7 GB/s).
// Each TEST_CASE is its own process (one SimGrid engine each).

#include <doctest/doctest.h>

#include <string>

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

  // About 230 GB/s on the NVSwitch of one DGX A100 [nccl-tests#149].
  TEST_CASE("measured busbw: DGX A100, one node") {
    check_within(busbw_GBps("dgx-a100-80gb", 1, 8, ""), 230.0, 0.05);
  }
}
