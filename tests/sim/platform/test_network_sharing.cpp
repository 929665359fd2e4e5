// Inter-node network sharing: fat-tree tapering and parallel-file-system saturation. The fat
// tree is a small inline machine (8 single-GPU nodes, 4 per leaf) so the numbers are easy to
// check by hand: each NIC port 10 GB/s, each leaf's uplink 4 x 10 / oversubscription.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "tests/sim/platform/sim_fixture.hpp"

namespace scalecast::sim {
namespace {

std::string tree_yaml(const std::string& oversubscription) {
  return fmt::format(R"(
name: tree
node_types:
  box:
    cpu: {{sockets: 1, cores_per_socket: 4}}
    gpus: {{type: v100-sxm2, count: 1}}
    nics: {{count: 1, bandwidth: 10GBps}}
    links:
      - {{class: pcie, bandwidth: 100GBps, between: [[cpu0, gpu0], [cpu0, nic0]]}}
partitions:
  - {{name: all, node_type: box, nodes: 8}}
network:
  topology: fat_tree
  port_bandwidth: 10GBps
  levels:
    - {{radix: 4, oversubscription: "{}"}}
    - {{radix: 2}}
)",
                     oversubscription);
}

// Per-node send bandwidth when every node sends `bytes` to each node of `peers(node)`.
double per_node_bandwidth(MachinePlatform& p, bool across) {
  constexpr double kBytes = 1e9;
  std::vector<testing::Transfer> t;
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      const bool same_leaf = a / 4 == b / 4;
      if (a != b && same_leaf != across) t.push_back({p.gpu(a, 0), p.gpu(b, 0), kBytes});
    }
  }
  const double time = testing::concurrent_time(t);
  return static_cast<double>(t.size()) / 8 * kBytes / time;
}

TEST_SUITE("unit") {
  TEST_CASE("fat tree all-to-all inside a leaf runs at the port rate") {
    auto p = testing::build(testing::parse(tree_yaml("2:1")), 8);
    const double bw = per_node_bandwidth(*p, false);
    MESSAGE("expected 10 GB/s per node (port rate), actual ", bw / 1e9, " GB/s");
    CHECK(bw == doctest::Approx(10e9).epsilon(0.01));
  }

  TEST_CASE("fat tree 2:1 all-to-all across the top gets half the leaf bandwidth") {
    auto p = testing::build(testing::parse(tree_yaml("2:1")), 8);
    const double bw = per_node_bandwidth(*p, true);
    MESSAGE("expected 5 GB/s per node (half of 10 with 2:1 tapering), actual ", bw / 1e9, " GB/s");
    CHECK(bw == doctest::Approx(5e9).epsilon(0.01));
  }

  TEST_CASE("fat tree 1:1 all-to-all across the top keeps the port rate") {
    auto p = testing::build(testing::parse(tree_yaml("1")), 8);
    const double bw = per_node_bandwidth(*p, true);
    MESSAGE("expected 10 GB/s per node (non-blocking), actual ", bw / 1e9, " GB/s");
    CHECK(bw == doctest::Approx(10e9).epsilon(0.01));
  }
}

// N Summit nodes read from the PFS at once (server disk read overlapped with the transfer to
// the client, client i on server i mod S). Expected: min(N x one EDR rail, aggregate).
double pfs_read_rate(int clients) {
  auto platform = platforms::load_platform("summit");
  auto p = testing::build(platform, clients);
  const auto servers = p->pfs_servers();
  constexpr double kBytes = 10e9;
  double end = 0.0;
  testing::run_actor(p->cpu(0, 0), [&] {
    std::vector<simgrid::s4u::CommPtr> comms;
    std::vector<simgrid::s4u::IoPtr> ios;
    for (int c = 0; c < clients; ++c) {
      const int s = c % static_cast<int>(servers.size());
      ios.push_back(p->pfs_disk(s)->read_async(static_cast<sg_size_t>(kBytes)));
      comms.push_back(simgrid::s4u::Comm::sendto_async(servers[s], p->cpu(c, 0),
                                                       static_cast<uint64_t>(kBytes)));
    }
    for (auto& io : ios) io->wait();
    simgrid::s4u::Comm::wait_all(comms);
    end = simgrid::s4u::Engine::get_clock();
  });
  return clients * kBytes / end;
}

TEST_SUITE("unit") {
  TEST_CASE("pfs few clients are limited by their own rails") {
    const double rate = pfs_read_rate(14);
    MESSAGE("expected 14 x 12.5 = 175 GB/s, actual ", rate / 1e9, " GB/s");
    CHECK(rate == doctest::Approx(14 * 12.5e9).epsilon(0.01));
  }

  TEST_CASE("pfs many clients saturate at the aggregate bandwidth") {
    const double rate = pfs_read_rate(420);
    MESSAGE("expected 2.5 TB/s (Alpine aggregate; 420 clients could take 5.25), actual ",
            rate / 1e12, " TB/s");
    CHECK(rate == doctest::Approx(2.5e12).epsilon(0.01));
  }
}

}  // namespace
}  // namespace scalecast::sim

namespace scalecast::sim {
namespace {

// Factors by message size and link class (calibrated mode), and the per-client PFS cap.
const char* kFactorsYaml = R"(
name: factors
node_types:
  box:
    cpu: {sockets: 1, cores_per_socket: 4}
    gpus: {type: v100-sxm2, count: 2}
    nics: {count: 1, bandwidth: 10GBps, latency: 1us}
    links:
      - {class: pcie, bandwidth: 20GBps, latency: 2us, between: [[cpu0, gpu0], [cpu0, gpu1], [cpu0, nic0]]}
partitions:
  - {name: all, node_type: box, nodes: 4}
network:
  topology: fat_tree
  port_bandwidth: 10GBps
  levels: [{radix: 8}]
network_model:
  factors:
    - {class: pcie, max_size: 1MB, latency_factor: 10}
    - {class: pcie, min_size: 1MB, bandwidth_factor: 0.5}
    - {class: nic, bandwidth_factor: 0.8}
storage:
  pfs: {servers: 2, read_bandwidth: 100GBps, per_client_bandwidth: 4GBps}
)";

TEST_SUITE("unit") {
  TEST_CASE("calibrated factors apply by bottleneck link class and message size") {
    auto p = testing::build(testing::parse(kFactorsYaml), 2, NetworkMode::kCalibrated);
    double small_s = 0.0, large_bw = 0.0, remote_bw = 0.0;
    testing::run_actor(p->gpu(0, 0), [&] {
      double t0 = simgrid::s4u::Engine::get_clock();
      simgrid::s4u::Comm::sendto(p->gpu(0, 0), p->gpu(0, 1), 8);
      small_s = simgrid::s4u::Engine::get_clock() - t0;
      t0 = simgrid::s4u::Engine::get_clock();
      simgrid::s4u::Comm::sendto(p->gpu(0, 0), p->gpu(0, 1), 1'000'000'000);
      large_bw = 1e9 / (simgrid::s4u::Engine::get_clock() - t0);
      t0 = simgrid::s4u::Engine::get_clock();
      simgrid::s4u::Comm::sendto(p->gpu(0, 0), p->gpu(1, 0), 1'000'000'000);
      remote_bw = 1e9 / (simgrid::s4u::Engine::get_clock() - t0);
    });
    // GPU0 -> CPU -> GPU1: two PCIe hops of 2 us; an 8-byte message is latency-bound.
    MESSAGE("8 B: expected 10 x 4 us = 40 us, actual ", small_s * 1e6, " us");
    CHECK(small_s == doctest::Approx(40e-6).epsilon(0.01).scale(0.0));
    MESSAGE("1 GB over PCIe: expected 0.5 x 20 = 10 GB/s, actual ", large_bw / 1e9, " GB/s");
    CHECK(large_bw == doctest::Approx(10e9).epsilon(0.01));
    MESSAGE("1 GB between nodes: expected 0.8 x 10 = 8 GB/s, actual ", remote_bw / 1e9, " GB/s");
    CHECK(remote_bw == doctest::Approx(8e9).epsilon(0.01));
  }

  TEST_CASE("pfs per-client cap limits one client below its nic") {
    auto p = testing::build(testing::parse(kFactorsYaml), 1);
    const auto bw = testing::sequential_bandwidths({{p->pfs_servers()[0], p->cpu(0, 0), 1e10}});
    MESSAGE("expected 4 GB/s (per_client_bandwidth; the NIC allows 10), actual ", bw[0] / 1e9);
    CHECK(bw[0] == doctest::Approx(4e9).epsilon(0.01));
  }
}

}  // namespace
}  // namespace scalecast::sim
