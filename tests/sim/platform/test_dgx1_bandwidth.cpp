// DGX-1V: the bandwidth of every GPU pair follows the hybrid cube-mesh NVLink counts
// ([NV-DGX1-WP], [nccl#671], [DLPerf]): links x 25 GB/s, and pairs without NVLink go over PCIe and
// the CPUs.

#include <doctest/doctest.h>

#include "tests/sim/platform/sim_fixture.hpp"

namespace scalecast::sim {
namespace {

// [NV-DGX1-WP], [nccl#671], [DLPerf]; kept here independently of the platform file so a
// wrong matrix in the file fails the test.
constexpr int kLinks[8][8] = {{0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0},
                              {1, 2, 0, 2, 0, 0, 1, 0}, {2, 1, 2, 0, 0, 0, 0, 1},
                              {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
                              {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0}};

TEST_SUITE("unit") {
  TEST_CASE("dgx1 gpu pair bandwidths follow the hybrid cube-mesh link counts") {
    auto p = testing::build(platforms::load_platform("dgx1-v100"), 1);
    std::vector<testing::Transfer> transfers;
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 8; ++j) {
        if (i != j) transfers.push_back({p->gpu(0, i), p->gpu(0, j), 1e9});
      }
    }
    const auto bw = testing::sequential_bandwidths(transfers);
    std::size_t k = 0;
    std::string table;
    for (int i = 0; i < 8; ++i) {
      for (int j = 0; j < 8; ++j) {
        if (i == j) {
          table += "    -";
          continue;
        }
        const double actual = bw[k++];
        // No NVLink: PCIe 3.0 x16 (15.75 GB/s) is the bottleneck of GPU-switch-CPU(-QPI)-...
        const double expected = kLinks[i][j] > 0 ? kLinks[i][j] * 25e9 : 15.75e9;
        table += fmt::format(" {:4.1f}", actual / 1e9);
        INFO("gpu", i, " -> gpu", j, ": expected ", expected / 1e9, " GB/s, actual ", actual / 1e9);
        CHECK(actual == doctest::Approx(expected).epsilon(0.01));
      }
      table += "\n";
    }
    MESSAGE("measured GB/s (rows: source GPU), expected links x 25 or 15.75 over PCIe:\n", table);
  }
}

}  // namespace
}  // namespace scalecast::sim
