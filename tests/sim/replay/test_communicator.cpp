// Communicators of the LLM pipeline job: a group with several members on each of several nodes
// runs one ring per member of a node (NCCL's channels), each leaving every node from a
// different member, each carrying 1/channels of the bytes; the bytes a NIC carries stay those of
// one ring, so on one NIC per node the time is the single ring's closed form.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <set>
#include <vector>

#include "sim/communicator.hpp"
#include "sim/engine_setup.hpp"
#include "sim/transport.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;
namespace sg4 = simgrid::s4u;

TEST_SUITE("unit") {
  TEST_CASE("communicator: one ring per member of a node, each leaving the node elsewhere") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 2;
    ps.gpus = 4;
    ps.gpu_link_lat_s = 0.0;
    ps.nic_lat_s = 0.0;
    TestPlatform platform(ps);
    std::vector<sg4::Host*> hosts;
    std::vector<int> nodes;
    for (int n = 0; n < 2; ++n)
      for (int g = 0; g < 4; ++g) {
        hosts.push_back(platform.gpu(n, g));
        nodes.push_back(n);
      }
    const Communicator multi(hosts, nodes);
    const Communicator single(hosts);
    CHECK(single.channels() == 1);
    REQUIRE(multi.channels() == 4);
    std::set<int> exits;
    for (int c = 0; c < 4; ++c) {
      const std::vector<int>& r = multi.ring(c);
      CHECK(std::set<int>(r.begin(), r.end()).size() == 8);  // a permutation of the members
      exits.insert(r[3]);  // the member of node 0 that sends to node 1
      CHECK(nodes[static_cast<std::size_t>(r[3])] == 0);
      CHECK(nodes[static_cast<std::size_t>(r[4])] == 1);
    }
    CHECK(exits.size() == 4);
    // Members on one node, or one per node: one ring.
    CHECK(Communicator(hosts, std::vector<int>(8, 0)).channels() == 1);
    CHECK(Communicator({hosts[0], hosts[4]}, {0, 1}).channels() == 1);
    // Uneven or interleaved node blocks: one ring.
    CHECK(Communicator(hosts, {0, 0, 0, 1, 1, 1, 1, 1}).channels() == 1);
    CHECK(Communicator(hosts, {0, 1, 0, 1, 0, 1, 0, 1}).channels() == 1);

    // One NIC per node: the 4 channels share it, so the all-reduce takes the single ring's
    // 2 (n - 1) / n S / B_nic.
    const double bytes = 400e6;
    double t = -1.0;
    sg4::Actor::create("caller", hosts[0], [&] {
      CollectiveCall call = RingAllReduce().start(multi, bytes);
      call.wait();
      t = call.done_at_s();
    });
    engine->run();
    CHECK(t == doctest::Approx(2.0 * 7.0 / 8.0 * bytes / ps.nic_bw).epsilon(1e-6));
  }

  TEST_CASE("communicator: over NCCL's socket transport a flow between nodes carries 1 / 0.53") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 4;
    ps.gpus = 1;
    ps.gpu_link_lat_s = 0.0;
    ps.nic_lat_s = 0.0;
    TestPlatform platform(ps);
    const double eta = kNcclSocketLinkFraction;
    // Nodes 0-1 over sockets, nodes 2-3 over RDMA: the same all-reduce, 1 / eta apart.
    const Communicator tcp({platform.gpu(0, 0), platform.gpu(1, 0)}, {0, 1}, 1.0 / eta);
    const Communicator rdma({platform.gpu(2, 0), platform.gpu(3, 0)}, {2, 3});
    CHECK(tcp.flow_factor(0, 1) == doctest::Approx(1.0 / eta));
    CHECK(rdma.flow_factor(0, 1) == 1.0);
    // Members on one node never pay it.
    CHECK(Communicator({platform.gpu(0, 0), platform.gpu(0, 0)}, {0, 0}, 1.0 / eta)
              .flow_factor(0, 1) == 1.0);
    const double bytes = 100e6;
    double t_tcp = -1.0, t_rdma = -1.0;
    sg4::Actor::create("tcp", platform.gpu(0, 0), [&] {
      CollectiveCall call = RingAllReduce().start(tcp, bytes);
      call.wait();
      t_tcp = call.done_at_s();
    });
    sg4::Actor::create("rdma", platform.gpu(2, 0), [&] {
      CollectiveCall call = RingAllReduce().start(rdma, bytes);
      call.wait();
      t_rdma = call.done_at_s();
    });
    engine->run();
    // 2 members: each sends 2 (n - 1) / n S = S through its NIC.
    CHECK(t_rdma == doctest::Approx(bytes / ps.nic_bw).epsilon(1e-6));
    CHECK(t_tcp == doctest::Approx(bytes / (eta * ps.nic_bw)).epsilon(1e-6));
  }
}
