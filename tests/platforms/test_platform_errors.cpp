// Malformed platform files give a precise ConfigError: file:line:col, key path, expectation.

#include <doctest/doctest.h>
#include <string>

#include "common/config_error.hpp"
#include "platforms/platform.hpp"

namespace scalecast::platforms {
namespace {

// Line numbers matter: the expected messages below point into this text.
const std::string kValid = R"(name: mini
node_types:
  box:
    cpu: {sockets: 2, cores_per_socket: 4}
    gpus: {type: v100-sxm2, count: 2}
    nics: {count: 1, bandwidth: 12.5GBps}
    links:
      - class: nvlink
        bandwidth: 50GBps
        between: [[cpu0, gpu0], [cpu1, gpu1]]
      - {class: xbus, bandwidth: 32GBps, between: [[cpu0, cpu1]]}
      - {class: pcie, bandwidth: 16GBps, between: [[cpu0, nic0]]}
partitions:
  - {name: all, node_type: box, nodes: 4}
network:
  topology: fat_tree
  port_bandwidth: 12.5GBps
  levels: [{radix: 4, oversubscription: "2:1"}]
)";

Platform parse(const std::string& text) {
  return parse_platform(text, "test.yaml", std::string(SCALECAST_SOURCE_DIR) + "/platforms");
}

std::string mutate(const std::string& from, const std::string& to) {
  std::string text = kValid;
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const common::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_SUITE("unit") {
  TEST_CASE("the valid mini platform loads") {
    const Platform p = parse(kValid);
    CHECK(p.total_nodes() == 4);
    CHECK(p.node_types[0].socket_of_gpu == std::vector<int>{0, 1});
    CHECK(p.node_types[0].nic_of_gpu == std::vector<int>{0, 0});
    CHECK(p.network.levels[0].oversubscription == 2.0);
  }

  TEST_CASE("missing key names the map and the key") {
    CHECK(error_of(mutate("  port_bandwidth: 12.5GBps\n", "")) ==
          "test.yaml:16:3: error: network: missing required key 'port_bandwidth'");
  }

  TEST_CASE("wrong unit shows the expectation and the text") {
    CHECK(error_of(mutate("bandwidth: 50GBps", "bandwidth: 50GHz")) ==
          "test.yaml:9:20: error: node_types.box.links[0].bandwidth: expected a bandwidth like "
          "\"50GBps\", got \"50GHz\" (unknown unit \"GHz\")");
  }

  TEST_CASE("unknown gpu type suggests the closest catalog key") {
    CHECK(error_of(mutate("type: v100-sxm2", "type: v100-sxm3")) ==
          "test.yaml:5:18: error: node_types.box.gpus.type: unknown GPU type 'v100-sxm3', did "
          "you mean 'v100-sxm2'? (catalog: a100-sxm4-40gb, a100-sxm4-80gb, h100-sxm5, "
          "h100-sxm5-96gb-500w, h200-sxm, k80-gk210, mi250x-gcd, p100-sxm2, v100-sxm2, "
          "v100-sxm2-32gb)");
  }

  TEST_CASE("link to a nonexistent socket lists the endpoints") {
    CHECK(error_of(mutate("[cpu1, gpu1]", "[cpu2, gpu1]")) ==
          "test.yaml:10:34: error: node_types.box.links[0].between[1][0]: unknown endpoint "
          "'cpu2': node type 'box' has cpu0..cpu1, gpu0..gpu1, nic0");
  }

  TEST_CASE("an endpoint with a leading zero is unknown, not read as another") {
    // gpu00 was read as gpu0.
    CHECK(error_of(mutate("[cpu1, gpu1]", "[cpu1, gpu01]")) ==
          "test.yaml:10:40: error: node_types.box.links[0].between[1][1]: unknown endpoint "
          "'gpu01': node type 'box' has cpu0..cpu1, gpu0..gpu1, nic0");
    CHECK(error_of(mutate("[cpu0, gpu0]", "[cpu00, gpu0]")).find("unknown endpoint 'cpu00'") !=
          std::string::npos);
  }

  TEST_CASE("NICs say whether they carry RDMA: required for Ethernet, only where TCP can go") {
    CHECK(parse(kValid).node_types[0].nic.rdma);  // InfiniBand or unnamed: RDMA
    const std::string nic = "nics: {count: 1, bandwidth: 12.5GBps}";
    CHECK(error_of(mutate(nic, "nics: {count: 1, technology: 100gbe, bandwidth: 12.5GBps}")) ==
          "test.yaml:6:11: error: node_types.box.nics: rdma: required for Ethernet NICs "
          "(technology 100gbe): true if they carry RoCE, false if TCP/IP only");
    CHECK(!parse(mutate(nic,
                        "nics: {count: 1, technology: 100gbe, bandwidth: 12.5GBps, rdma: "
                        "false}"))
               .node_types[0]
               .nic.rdma);
    CHECK(parse(mutate(nic, "nics: {count: 1, technology: roce, bandwidth: 12.5GBps, rdma: true}"))
              .node_types[0]
              .nic.rdma);
    CHECK(!parse(mutate(nic,
                        "nics: {count: 1, technology: edr, bandwidth: 12.5GBps, rdma: "
                        "false}"))
               .node_types[0]
               .nic.rdma);  // IPoIB only
    CHECK(error_of(mutate(nic,
                          "nics: {count: 1, technology: slingshot11, bandwidth: 25GBps, "
                          "rdma: false}")) ==
          "test.yaml:6:72: error: node_types.box.nics.rdma: expected true: NICs of technology "
          "\"slingshot11\" carry no TCP/IP here, so without RDMA they would carry nothing");
    CHECK(error_of(mutate(nic, "nics: {count: 1, bandwidth: 12.5GBps, rdma: maybe}"))
              .find("node_types.box.nics.rdma: expected true or false") != std::string::npos);
  }

  TEST_CASE("negative node count is rejected") {
    CHECK(error_of(mutate("nodes: 4", "nodes: -4")) ==
          "test.yaml:14:40: error: partitions[0].nodes: expected at least 1 (a whole number from 1 "
          "to 100,000,000), got -4");
  }

  TEST_CASE("negative gpu count is rejected") {
    CHECK(error_of(mutate("count: 2", "count: -2")) ==
          "test.yaml:5:36: error: node_types.box.gpus.count: expected at least 1 (a whole number "
          "from 1 to 1,024), got -2");
  }

  TEST_CASE("zero sockets is rejected") {
    CHECK(error_of(mutate("sockets: 2", "sockets: 0")) ==
          "test.yaml:4:20: error: node_types.box.cpu.sockets: expected at least 1 (a whole number "
          "from 1 to 1,024), got 0");
  }

  TEST_CASE("gpu socket that does not exist is rejected") {
    CHECK(error_of(mutate("count: 2}", "count: 2, socket_of_gpu: [0, 5]}")) ==
          "test.yaml:5:58: error: node_types.box.gpus.socket_of_gpu[1]: socket 5 does not exist "
          "(this node type has 2)");
  }

  TEST_CASE("unreachable gpu is rejected") {
    CHECK(error_of(mutate(", [cpu1, gpu1]", "")) ==
          "test.yaml:8:7: error: node_types.box.links: cpu0 has no route to gpu1: add a link");
  }

  TEST_CASE("unknown node type in a partition is rejected") {
    CHECK(error_of(mutate("node_type: box", "node_type: bx")) ==
          "test.yaml:14:28: error: partitions[0].node_type: unknown node type 'bx' (defined: box)");
  }

  TEST_CASE("unknown key gets a suggestion") {
    CHECK(error_of(mutate("port_bandwidth", "port_bandwith")) ==
          "test.yaml:17:3: error: network.port_bandwith: unknown key (did you mean "
          "'port_bandwidth'?)");
  }

  TEST_CASE("oversubscription below one is rejected") {
    CHECK(error_of(mutate("\"2:1\"", "\"1:2\"")) ==
          "test.yaml:18:41: error: network.levels[0].oversubscription: expected a down:up ratio "
          "from 1 to 1000 like 2 or \"2:1\", got \"1:2\"");
  }

  TEST_CASE("unknown topology is rejected") {
    CHECK(error_of(mutate("topology: fat_tree", "topology: torus")) ==
          "test.yaml:16:13: error: network.topology: unknown topology 'torus' (expected "
          "fat_tree, rail_optimized, dragonfly or dragonfly_plus)");
  }

  TEST_CASE("asymmetric nvlink matrix is rejected") {
    const std::string text = mutate(
        "    links:\n",
        "    nvlink_matrix: {link_bandwidth: 25GBps, counts: [[0, 1], [2, 0]]}\n    links:\n");
    CHECK(error_of(text) ==
          "test.yaml:7:54: error: node_types.box.nvlink_matrix.counts[0]: not symmetric: "
          "gpu0-gpu1 has 1 links but gpu1-gpu0 has 2");
  }

  TEST_CASE("an nvlink matrix linking a GPU to itself is rejected at the diagonal entry") {
    const std::string text = mutate(
        "    links:\n",
        "    nvlink_matrix: {link_bandwidth: 25GBps, counts: [[1, 1], [1, 0]]}\n    links:\n");
    CHECK(error_of(text) ==
          "test.yaml:7:55: error: node_types.box.nvlink_matrix.counts[0][0]: gpu0 cannot have "
          "NVLinks to itself; expected 0 on the diagonal");
  }

  TEST_CASE("a second link between one pair of vertices is an error naming the first") {
    // Routes take one link per hop, so a second link between a pair carries nothing; an exact
    // repeat made SimGrid abort ("Link 'nvlink.n0.gpu0-gpu1.up' declared several times").
    CHECK(error_of(mutate("[cpu1, gpu1]]", "[cpu1, gpu1], [cpu0, gpu0]]")) ==
          "test.yaml:10:47: error: node_types.box.links[0].between[2]: cpu0 and gpu0 are already "
          "linked at node_types.box.links[0].between[0]: give one link per pair (its `count`, or "
          "the nvlink_matrix entry, multiplies the bandwidth)");
    // Reversed, and in another group of the same class.
    CHECK(error_of(mutate("[cpu1, gpu1]]", "[cpu1, gpu1], [gpu0, cpu0]]"))
              .starts_with("test.yaml:10:47: error: node_types.box.links[0].between[2]: gpu0 and "
                           "cpu0 are already linked at node_types.box.links[0].between[0]"));
    CHECK(error_of(mutate("      - {class: pcie",
                          "      - {class: xbus, bandwidth: 32GBps, between: [[cpu1, cpu0]]}\n"
                          "      - {class: pcie"))
              .starts_with("test.yaml:12:52: error: node_types.box.links[2].between[0]: cpu1 and "
                           "cpu0 are already linked at node_types.box.links[1].between[0]"));
    // An NVLink matrix entry and a links: entry for the same GPU pair.
    const std::string both =
        mutate("    links:\n",
               "    nvlink_matrix: {link_bandwidth: 25GBps, counts: [[0, 1], [1, 0]]}\n"
               "    links:\n      - {class: nvlink, bandwidth: 25GBps, between: [[gpu1, gpu0]]}\n");
    CHECK(error_of(both).starts_with(
        "test.yaml:7:58: error: node_types.box.nvlink_matrix.counts[0][1]: gpu0 and gpu1 are "
        "already linked at node_types.box.links[0].between[0]"));
  }

  TEST_CASE("unknown platform name says where it looked") {
    try {
      load_platform("no-such-machine");
      FAIL("expected a ConfigError");
    } catch (const common::ConfigError& e) {
      CHECK(std::string(e.what()).find("no platform named 'no-such-machine'") != std::string::npos);
    }
  }
}

}  // namespace
}  // namespace scalecast::platforms
