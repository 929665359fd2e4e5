// Summit: single large transfers inside a socket (NVLink), across sockets (X-Bus) and between
// nodes (EDR rails) reach the bandwidth of their bottleneck link; two rails together give the
// node injection bandwidth. Ideal network mode (CM02, no factors) unless stated.

#include <doctest/doctest.h>
#include <simgrid/s4u/Link.hpp>
#include <string>

#include "sim/machine_zone.hpp"
#include "tests/sim/platform/sim_fixture.hpp"

namespace scalecast::sim {
namespace {

constexpr double kBytes = 1e9;  // 1 GB: route latency (a few us) is < 0.1% of the transfer

std::vector<std::string> route_names(simgrid::s4u::Host* a, simgrid::s4u::Host* b) {
  std::vector<simgrid::s4u::Link*> links;
  a->route_to(b, links, nullptr);
  std::vector<std::string> out;
  for (auto* l : links) out.push_back(l->get_name());
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_SUITE("unit") {
  TEST_CASE("summit gpu pair in a socket moves 50 GBps over NVLink") {
    auto p = testing::build(platforms::load_platform("summit"), 1);
    const auto bw = testing::sequential_bandwidths({{p->gpu(0, 0), p->gpu(0, 1), kBytes}});
    MESSAGE("expected 50 GB/s (2 NVLink 2 bricks), actual ", bw[0] / 1e9, " GB/s");
    CHECK(bw[0] == doctest::Approx(50e9).epsilon(0.01));
    CHECK(route_names(p->gpu(0, 0), p->gpu(0, 1)) ==
          std::vector<std::string>{"nvlink.n0.gpu0-gpu1.up"});
  }

  TEST_CASE("summit gpu pair across sockets is limited by the X-Bus") {
    auto p = testing::build(platforms::load_platform("summit"), 1);
    const auto bw = testing::sequential_bandwidths({{p->gpu(0, 1), p->gpu(0, 4), kBytes}});
    MESSAGE("expected 32 GB/s (X-Bus per direction), actual ", bw[0] / 1e9, " GB/s");
    CHECK(bw[0] == doctest::Approx(32e9).epsilon(0.01));
    // GPU -> CPU (NVLink) -> X-Bus -> CPU -> GPU (NVLink).
    CHECK(route_names(p->gpu(0, 1), p->gpu(0, 4)) ==
          std::vector<std::string>{"nvlink.n0.cpu0-gpu1.down", "xbus.n0.cpu0-cpu1.up",
                                   "nvlink.n0.cpu1-gpu4.up"});
  }

  TEST_CASE("summit gpus on two nodes are limited by one EDR rail") {
    auto p = testing::build(platforms::load_platform("summit"), 2);
    const auto bw = testing::sequential_bandwidths({{p->gpu(0, 0), p->gpu(1, 0), kBytes}});
    MESSAGE("expected 12.5 GB/s (EDR line rate), actual ", bw[0] / 1e9, " GB/s");
    CHECK(bw[0] == doctest::Approx(12.5e9).epsilon(0.01));
    // The GPU leaves through its own socket and that socket's rail.
    const auto r = route_names(p->gpu(0, 4), p->gpu(1, 4));
    CHECK(contains(r, "pcie.n0.cpu1-nic1.up"));
    CHECK(contains(r, "nic.n0.r1.up"));
    CHECK(contains(r, "nic.n1.r1.down"));
  }

  TEST_CASE("summit two rails together give the node injection bandwidth") {
    auto p = testing::build(platforms::load_platform("summit"), 2);
    // One GPU per socket sends to the same GPU of the other node: both rails in use.
    const double t = testing::concurrent_time(
        {{p->gpu(0, 0), p->gpu(1, 0), kBytes}, {p->gpu(0, 3), p->gpu(1, 3), kBytes}});
    const double injection = 2 * kBytes / t;
    MESSAGE("expected 25 GB/s (2 x 12.5 line rate), actual ", injection / 1e9, " GB/s");
    CHECK(injection == doctest::Approx(25e9).epsilon(0.01));
  }

  TEST_CASE("summit two gpus of one socket share their socket's rail") {
    auto p = testing::build(platforms::load_platform("summit"), 2);
    const double t = testing::concurrent_time(
        {{p->gpu(0, 0), p->gpu(1, 0), kBytes}, {p->gpu(0, 1), p->gpu(1, 1), kBytes}});
    const double injection = 2 * kBytes / t;
    MESSAGE("expected 12.5 GB/s (one rail), actual ", injection / 1e9, " GB/s");
    CHECK(injection == doctest::Approx(12.5e9).epsilon(0.01));
  }

  TEST_CASE("summit calibrated mode applies the EDR factor from the platform file") {
    const auto platform = platforms::load_platform("summit");
    auto p = testing::build(platform, 2, NetworkMode::kCalibrated);
    double factor = 0.0;
    for (const auto& f : platform.network_model.factors) {
      if (f.link_class == "nic") factor = f.bandwidth_factor;
    }
    REQUIRE(factor > 0.0);
    const auto bw = testing::sequential_bandwidths({{p->gpu(0, 0), p->gpu(1, 0), kBytes}});
    MESSAGE("expected ", factor * 12.5, " GB/s (factor x 12.5), actual ", bw[0] / 1e9, " GB/s");
    CHECK(bw[0] == doctest::Approx(factor * 12.5e9).epsilon(0.01));
  }

  TEST_CASE("summit nvme reads run at the disk rate") {
    auto p = testing::build(platforms::load_platform("summit"), 1);
    double rate = 0.0;
    testing::run_actor(p->cpu(0, 0), [&] {
      const double t0 = simgrid::s4u::Engine::get_clock();
      p->nvme(0)->read(static_cast<sg_size_t>(11e9));
      rate = 11e9 / (simgrid::s4u::Engine::get_clock() - t0);
    });
    MESSAGE("expected 5.5 GB/s (Summit NVMe read), actual ", rate / 1e9, " GB/s");
    CHECK(rate == doctest::Approx(5.5e9).epsilon(0.01));
  }

  TEST_CASE("full summit builds and its farthest nodes talk at the rail rate") {
    auto p = testing::build(platforms::load_platform("summit"), 0);  // 0 = every node
    CHECK(p->node_count() == 4608);
    CHECK(p->gpu_type(4607) == "v100-sxm2-32gb");  // the last 54 nodes are high-memory
    const auto r = route_names(p->gpu(0, 0), p->gpu(4607, 5));
    CHECK(contains(r, "ft_l3.s0.up") == false);  // one top switch: routes turn at level 3
    CHECK(contains(r, "ft_l2.s0.up"));
    CHECK(contains(r, "ft_l2.s15.down"));
    const auto bw = testing::sequential_bandwidths({{p->gpu(0, 0), p->gpu(4607, 5), kBytes}});
    MESSAGE("expected 12.5 GB/s across the whole tree, actual ", bw[0] / 1e9, " GB/s");
    CHECK(bw[0] == doctest::Approx(12.5e9).epsilon(0.01));
  }

  TEST_CASE("link classes come from link names") {
    CHECK(link_class_of("nvlink.n0.gpu0-gpu1.up") == "nvlink");
    CHECK(link_class_of("ft_l2.s3.down") == "ft_l2");
    CHECK(link_class_of("pfs_aggregate.all.up") == "pfs_aggregate");
  }
}

}  // namespace
}  // namespace scalecast::sim
