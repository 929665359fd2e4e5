// Summit: single large transfers inside a socket (NVLink), across sockets (X-Bus) and between
// nodes (EDR rails) reach the bandwidth of their bottleneck link; two rails together give the
// node injection bandwidth. Ideal network mode (CM02, no factors).

#include <doctest/doctest.h>

#include "tests/sim/platform/sim_fixture.hpp"

namespace scalecast::sim {
namespace {

using testing::Transfer;
constexpr double kBytes = 1e9;  // 1 GB: latency (a few us) is < 0.1% of the transfer

TEST_SUITE("unit") {
  TEST_CASE("summit gpu pair in a socket moves 50 GBps over NVLink") {
    auto p = testing::build(platforms::load_platform("summit"), 1);
    const auto bw = testing::sequential_bandwidths({{p->gpu(0, 0), p->gpu(0, 1), kBytes}});
    MESSAGE("expected 50 GB/s (2 NVLink 2 bricks), actual ", bw[0] / 1e9, " GB/s");
    CHECK(bw[0] == doctest::Approx(50e9).epsilon(0.01));
  }
}

}  // namespace
}  // namespace scalecast::sim
