// Numbers outside their physical range are errors at the key (issue 14): zero or absurd
// bandwidths and latencies, counts that would be truncated, factors that let flows beat their
// links, factor classes no link has, unknown GPU host links.

#include <doctest/doctest.h>
#include <string>

#include "common/config_error.hpp"
#include "platforms/gpu_spec.hpp"
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
network_model:
  factors:
    - {class: nic, bandwidth_factor: 0.9}
storage:
  pfs: {servers: 2, read_bandwidth: 10GBps}
)";

std::string mutate(const std::string& from, const std::string& to) {
  std::string text = kValid;
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    parse_platform(text, "test.yaml", std::string(SCALECAST_SOURCE_DIR) + "/platforms");
  } catch (const common::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_SUITE("unit") {
  TEST_CASE("the limits test platform loads") { CHECK(error_of(kValid) == "(no error)"); }

  TEST_CASE("a zero or absurd link bandwidth is an error at the key") {
    CHECK(error_of(mutate("bandwidth: 50GBps", "bandwidth: 0GBps")) ==
          "test.yaml:9:20: error: node_types.box.links[0].bandwidth: expected a bandwidth of at "
          "least 1 kB/s and at most 1000 TB/s, got \"0GBps\"");
    CHECK(error_of(mutate("bandwidth: 50GBps", "bandwidth: 1e300GBps")) ==
          "test.yaml:9:20: error: node_types.box.links[0].bandwidth: expected a bandwidth of at "
          "least 1 kB/s and at most 1000 TB/s, got \"1e300GBps\"");
  }

  TEST_CASE("NIC, fat-tree port and file-system bandwidths are range-checked") {
    CHECK(error_of(
              mutate("nics: {count: 1, bandwidth: 12.5GBps}", "nics: {count: 1, bandwidth: 0GBps}"))
              .find("node_types.box.nics.bandwidth: expected a bandwidth of at least 1 kB/s") !=
          std::string::npos);
    CHECK(error_of(mutate("port_bandwidth: 12.5GBps", "port_bandwidth: 1e300GBps")) ==
          "test.yaml:17:19: error: network.port_bandwidth: expected a bandwidth of at least 1 "
          "kB/s and at most 1000 TB/s, got \"1e300GBps\"");
    CHECK(error_of(mutate("read_bandwidth: 10GBps", "read_bandwidth: 0GBps"))
              .find("storage.pfs.read_bandwidth: expected a bandwidth of at least 1 kB/s") !=
          std::string::npos);
  }

  TEST_CASE("a latency above one second is an error") {
    CHECK(error_of(mutate("{radix: 4, oversubscription: \"2:1\"}",
                          "{radix: 4, oversubscription: \"2:1\", latency: 5s}"))
              .find("network.levels[0].latency: expected a time of at least 0 s and at most 1 "
                    "s, got \"5s\"") != std::string::npos);
  }

  TEST_CASE("fat-tree radix and level count are bounded so aggregated uplinks stay finite") {
    CHECK(error_of(mutate("{radix: 4,", "{radix: 4294967297,"))
              .find("network.levels[0].radix: expected at most 1,000,000") != std::string::npos);
    std::string nine = "levels: [";
    for (int i = 0; i < 9; ++i) nine += std::string(i ? ", " : "") + "{radix: 4}";
    CHECK(error_of(mutate("levels: [{radix: 4, oversubscription: \"2:1\"}]", nine + "]"))
              .find("network.levels: expected at most 8 levels, got 9") != std::string::npos);
  }

  TEST_CASE("an oversubscription of inf or above 1000 is an error") {
    CHECK(error_of(mutate("oversubscription: \"2:1\"", "oversubscription: inf"))
              .find("expected a down:up ratio from 1 to 1000") != std::string::npos);
  }

  TEST_CASE("per-node counts are integers within a stated range, not truncated") {
    CHECK(error_of(mutate("count: 2}", "count: 4294967297}")) ==
          "test.yaml:5:36: error: node_types.box.gpus.count: expected at most 1,024 (a whole "
          "number from 1 to 1,024), got 4294967297");
    CHECK(error_of(mutate("nics: {count: 1,", "nics: {count: 4294967296,"))
              .find("nics.count: expected at most 1,024") != std::string::npos);
  }

  TEST_CASE("a bandwidth factor above 1 or a latency factor below 1 is an error") {
    CHECK(error_of(mutate("bandwidth_factor: 0.9", "bandwidth_factor: 50")) ==
          "test.yaml:21:38: error: network_model.factors[0].bandwidth_factor: expected an "
          "efficiency from 0.001 to 1 (the fraction of the bottleneck's bandwidth a flow gets), "
          "got 50");
    // 1e-310 gave an inf throughput with exit 0, 1e-320 (a denormal) an all-zero result.
    for (const char* tiny : {"1e-310", "1e-320", "0.0009"}) {
      INFO(tiny);
      CHECK(error_of(mutate("bandwidth_factor: 0.9", std::string("bandwidth_factor: ") + tiny))
                .find("bandwidth_factor: expected an efficiency from 0.001 to 1") !=
            std::string::npos);
    }
    CHECK(error_of(mutate("bandwidth_factor: 0.9", "bandwidth_factor: 0.001")) == "(no error)");
    CHECK(error_of(mutate("bandwidth_factor: 0.9", "bandwidth_factor: 1, latency_factor: 0.5"))
              .find("latency_factor: expected a factor from 1 to 1000") != std::string::npos);
    CHECK(error_of(mutate("bandwidth_factor: 0.9", "bandwidth_factor: 1, latency_factor: 13.01")) ==
          "(no error)");
  }

  TEST_CASE("a fat tree that cannot hold the file's own nodes is an error at network.levels") {
    // 4 nodes of 1 NIC under a radix-2 level topped by radix 1: 2 ports. It loaded, and the
    // engine failed building it (exit 4, no place).
    CHECK(error_of(mutate("levels: [{radix: 4, oversubscription: \"2:1\"}]",
                          "levels: [{radix: 2}, {radix: 1}]")) ==
          "test.yaml:18:11: error: network.levels: mini cannot build 4 nodes: a fat tree whose top "
          "level has radix 1 cannot add levels: its 2 level(s) hold at most 2 NIC ports, 4 are "
          "needed (at most 2 nodes)");
    CHECK(error_of(mutate("levels: [{radix: 4, oversubscription: \"2:1\"}]",
                          "levels: [{radix: 4}, {radix: 1}]")) == "(no error)");
  }

  TEST_CASE("simulated PFS servers are at most the real servers and at most 10,000") {
    // 1e6 simulated servers (of 77) took 22 GB and did not finish; 100 of 77 was accepted.
    CHECK(error_of(mutate("servers: 2,", "servers: 2, simulated_servers: 3,")) ==
          "test.yaml:23:40: error: storage.pfs.simulated_servers: expected at most 2 (a whole "
          "number from 1 to 2), got 3");
    CHECK(error_of(mutate("servers: 2,", "servers: 20000, simulated_servers: 10001,"))
              .find("simulated_servers: expected at most 10,000") != std::string::npos);
    CHECK(error_of(mutate("servers: 2,", "servers: 2, simulated_servers: 2,")) == "(no error)");
  }

  TEST_CASE("a factor class no link has is an error listing the classes") {
    CHECK(error_of(mutate("{class: nic,", "{class: nics,")) ==
          "test.yaml:21:15: error: network_model.factors[0].class: no link of this platform has "
          "class 'nics' (classes: ft_l1, nic, nvlink, pcie, pfs, pfs_aggregate, xbus)");
  }

  TEST_CASE("an unknown GPU host link is an error") {
    const std::string gpus =
        "gpus:\n  myg: {fp64: 1TFLOPS, fp32: 2TFLOPS, memory: 16GB, memory_bandwidth: 900GBps, "
        "host_link: pcie9x16}\n";
    CHECK(error_of(mutate("node_types:\n", gpus + "node_types:\n"))
              .find("gpus.myg.host_link: unknown host link 'pcie9x16' (known: pcie3x16, pcie3, "
                    "pcie4x16, pcie4, pcie5x16, pcie5, nvlink2, infinity-fabric, memory)") !=
          std::string::npos);
    CHECK(host_link_bandwidth("infinity-fabric") == 36e9);
  }

  TEST_CASE("a calibration key must name a catalog GPU of the same peaks") {
    const auto with = [](const std::string& entry) {
      return error_of(mutate("node_types:\n", "gpus:\n  myg: {" + entry +
                                                  "fp64: 7.8TFLOPS, fp32: 15.7TFLOPS, "
                                                  "fp16: 31.4TFLOPS, tensor_fp16: 125TFLOPS, "
                                                  "memory: 32GB, memory_bandwidth: 900GBps, "
                                                  "host_link: pcie3x16}\nnode_types:\n"));
    };
    // The V100 SXM2's figures with twice the memory: its measurements carry over.
    CHECK(with("calibration_key: v100-sxm2, ") == "(no error)");
    CHECK(with("calibration_key: v100-sxm3, ")
              .find("gpus.myg.calibration_key: unknown GPU "
                    "\"v100-sxm3\" (expected a catalog key: ") != std::string::npos);
    CHECK(with("calibration_key: myg, ").find("expected the key of another catalog GPU") !=
          std::string::npos);
    // The 32 GB part takes the 16 GB part's data: a chain is refused, naming its end.
    CHECK(with("calibration_key: v100-sxm2-32gb, ")
              .find("\"v100-sxm2-32gb\" takes its measurements from \"v100-sxm2\"") !=
          std::string::npos);
    // Another GPU's clocks: refused, naming the first figure that differs.
    CHECK(with("calibration_key: a100-sxm4-40gb, ")
              .find("expected a GPU of the same peaks and memory bandwidth (measured kernel times "
                    "carry over only between parts of the same silicon and clocks): fp64 is "
                    "7.8e+12 here and 9.7e+12 on a100-sxm4-40gb") != std::string::npos);
  }
}

}  // namespace
}  // namespace scalecast::platforms
