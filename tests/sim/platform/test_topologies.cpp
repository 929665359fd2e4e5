// NVSwitch nodes, rail-optimized, dragonfly and dragonfly+ networks, heterogeneous machines
// and build options: routes follow the topology and single flows reach their bottleneck.

#include <doctest/doctest.h>
#include <simgrid/s4u/Link.hpp>
#include <stdexcept>

#include "tests/sim/platform/sim_fixture.hpp"

namespace scalecast::sim {
namespace {

std::vector<std::string> route_names(simgrid::s4u::Host* a, simgrid::s4u::Host* b) {
  std::vector<simgrid::s4u::Link*> links;
  a->route_to(b, links, nullptr);
  std::vector<std::string> out;
  for (auto* l : links) out.push_back(l->get_name());
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool has_class(const std::vector<std::string>& v, const std::string& cls) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& n) {
    return n.compare(0, cls.size() + 1, cls + ".") == 0;
  });
}

TEST_SUITE("unit") {
  TEST_CASE("dgx h100 gpu pair moves 450 GBps through the nvswitch") {
    auto p = testing::build(platforms::load_platform("dgx-h100-superpod"), 1);
    const auto bw = testing::sequential_bandwidths({{p->gpu(0, 0), p->gpu(0, 5), 1e10}});
    MESSAGE("expected 450 GB/s (NV18 per direction), actual ", bw[0] / 1e9, " GB/s");
    CHECK(bw[0] == doctest::Approx(450e9).epsilon(0.01));
    CHECK(route_names(p->gpu(0, 0), p->gpu(0, 5)) ==
          std::vector<std::string>{"nvswitch.n0.gpu0-nvs0.up", "nvswitch.n0.gpu5-nvs0.down"});
  }

  TEST_CASE("dgx2h gpus on two baseboards cross the board-to-board switch link") {
    auto p = testing::build(platforms::load_platform("dgx2h"), 1);
    const auto bw = testing::sequential_bandwidths({{p->gpu(0, 0), p->gpu(0, 12), 1e10}});
    MESSAGE("expected 150 GB/s (6 NVLink per GPU), actual ", bw[0] / 1e9, " GB/s");
    CHECK(bw[0] == doctest::Approx(150e9).epsilon(0.01));
    CHECK(has(route_names(p->gpu(0, 0), p->gpu(0, 12)), "nvswitch.n0.nvs0-nvs1.up"));
  }

  TEST_CASE("rail optimized same rail stays on one leaf and other rails cross the spine") {
    auto p = testing::build(platforms::load_platform("dgx-h100-superpod"), 33);
    const auto same = route_names(p->gpu(0, 3), p->gpu(1, 3));
    CHECK_FALSE(has_class(same, "ro_leaf"));
    CHECK(has(same, "nic.n0.r3.up"));
    const auto other_rail = route_names(p->gpu(0, 3), p->gpu(1, 4));
    CHECK(has(other_rail, "ro_leaf.su0.r3.up"));
    CHECK(has(other_rail, "ro_leaf.su0.r4.down"));
    const auto other_su = route_names(p->gpu(0, 3), p->gpu(32, 3));
    CHECK(has(other_su, "ro_leaf.su1.r3.down"));
    const auto bw = testing::sequential_bandwidths({{p->gpu(0, 3), p->gpu(32, 3), 1e10}});
    MESSAGE("expected 50 GB/s (NDR400 rail), actual ", bw[0] / 1e9, " GB/s");
    CHECK(bw[0] == doctest::Approx(50e9).epsilon(0.01));
  }

  TEST_CASE("dragonfly four rails between groups give 100 GBps node injection") {
    auto p = testing::build(platforms::load_platform("perlmutter"), 129);
    // Node 0 is in group 0 (nodes 0-127), node 128 in group 1.
    const auto r = route_names(p->gpu(0, 0), p->gpu(128, 0));
    CHECK(has(r, "df_global.g0-g1.up"));
    std::vector<testing::Transfer> t;
    for (int g = 0; g < 4; ++g) t.push_back({p->gpu(0, g), p->gpu(128, g), 1e10});
    const double injection = 4e10 / testing::concurrent_time(t);
    MESSAGE("expected 100 GB/s (4 x 25 GB/s Slingshot), actual ", injection / 1e9, " GB/s");
    CHECK(injection == doctest::Approx(100e9).epsilon(0.01));
  }

  TEST_CASE("dragonfly plus routes leaf to global to leaf") {
    auto p = testing::build(testing::parse(R"(
name: dfp
node_types:
  box:
    cpu: {sockets: 1, cores_per_socket: 4}
    gpus: {type: a100-sxm4-40gb, count: 1}
    nics: {count: 1, bandwidth: 25GBps}
    links:
      - {class: pcie, bandwidth: 31.5GBps, between: [[cpu0, gpu0], [cpu0, nic0]]}
partitions:
  - {name: all, node_type: box, nodes: 16}
network:
  topology: dragonfly_plus
  port_bandwidth: 25GBps
  leaves_per_group: 2
  ports_per_leaf: 4
  leaf_oversubscription: 2
  global_link: {bandwidth: 25GBps, links_per_group_pair: 2}
)"),
                            16);
    CHECK_FALSE(has_class(route_names(p->gpu(0, 0), p->gpu(1, 0)), "dfp_leaf"));
    const auto same_group = route_names(p->gpu(0, 0), p->gpu(4, 0));
    CHECK(has(same_group, "dfp_leaf.l0.up"));
    CHECK_FALSE(has_class(same_group, "dfp_global"));
    CHECK(has(route_names(p->gpu(0, 0), p->gpu(8, 0)), "dfp_global.g0-g1.up"));
    // 4 nodes of leaf 0 to the 4 of leaf 1: the 2:1 leaf uplink (50 GB/s) halves them.
    std::vector<testing::Transfer> t;
    for (int i = 0; i < 4; ++i) t.push_back({p->gpu(i, 0), p->gpu(4 + i, 0), 1e10});
    const double per_node = 1e10 / testing::concurrent_time(t);
    MESSAGE("expected 12.5 GB/s per node (2:1 leaf), actual ", per_node / 1e9, " GB/s");
    CHECK(per_node == doctest::Approx(12.5e9).epsilon(0.01));
  }

  TEST_CASE("heterogeneous machine gives each partition its gpu type") {
    auto p = testing::build(platforms::load_platform("hetero-v100-a100"), 32);
    CHECK(p->gpu_type(0) == "v100-sxm2");
    CHECK(p->gpu_type(16) == "a100-sxm4-80gb");
    CHECK(p->partition_of(16) == "a100");
    CHECK(p->socket_of_gpu(16, 5) == 1);
    // V100 node (EDR 12.5 GB/s) to A100 node (HDR 25 GB/s): the EDR rail limits.
    const auto bw = testing::sequential_bandwidths({{p->gpu(0, 0), p->gpu(16, 0), 1e10}});
    MESSAGE("expected 12.5 GB/s (EDR side), actual ", bw[0] / 1e9, " GB/s");
    CHECK(bw[0] == doctest::Approx(12.5e9).epsilon(0.01));
  }

  TEST_CASE("build options select a partition and reject impossible node counts") {
    const auto summit = platforms::load_platform("summit");
    BuildOptions too_many;
    too_many.nodes = 4609;
    CHECK_THROWS_AS(build_platform(testing::test_engine(), summit, too_many),
                    std::invalid_argument);
    BuildOptions unknown;
    unknown.partition = "debug";
    CHECK_THROWS_AS(build_platform(testing::test_engine(), summit, unknown), std::invalid_argument);
    BuildOptions highmem;
    highmem.partition = "highmem";
    highmem.nodes = 0;  // the whole partition
    highmem.network = NetworkMode::kIdeal;
    auto p = build_platform(testing::test_engine(), summit, highmem);
    CHECK(p->node_count() == 54);
    CHECK(p->gpu_type(53) == "v100-sxm2-32gb");
    CHECK(p->pfs_servers().size() == 7);
    CHECK(p->nvme(0) != nullptr);
    CHECK_THROWS_AS(build_platform(testing::test_engine(), summit, highmem), std::logic_error);
  }
}

}  // namespace
}  // namespace scalecast::sim
