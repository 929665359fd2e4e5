// Clusters sized by the question (platforms/cluster_size.hpp, sim/cluster.hpp): a machine grown
// or shrunk by its file's topology rule has exactly the switches and links the rule's closed
// form gives, routes still climb only as high as needed, and node counts the rule cannot build
// are rejected with the maximum, at the scenario key that asked for them.

#include <doctest/doctest.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <stdexcept>

#include "common/config_error.hpp"
#include "platforms/cluster_size.hpp"
#include "sim/cluster.hpp"
#include "tests/sim/platform/sim_fixture.hpp"

namespace scalecast::sim {
namespace {

// Duplex links of the built zone per class (each is an .up and a .down SimGrid link).
std::map<std::string, long> built_links(const std::vector<std::string>& classes) {
  std::map<std::string, long> out;
  for (const std::string& c : classes) out[c] = 0;
  for (const simgrid::s4u::Link* l : testing::test_engine().get_all_links()) {
    const std::string name = l->get_name();
    if (!name.ends_with(".up")) continue;
    const std::string cls = name.substr(0, name.find('.'));
    if (out.count(cls)) ++out[cls];
  }
  return out;
}

std::vector<std::pair<std::string, long>> shape_links(const platforms::Platform& p) {
  return platforms::network_shape(p.network, p.total_nodes(), p.max_nics_per_node()).links;
}

platforms::Platform grown(const std::string& name, long nodes, const std::string& part = "") {
  platforms::Platform p = platforms::load_platform(name);
  platforms::resize_platform(p, nodes, part);
  return p;
}

std::vector<std::string> route_names(simgrid::s4u::Host* a, simgrid::s4u::Host* b) {
  std::vector<simgrid::s4u::Link*> links;
  a->route_to(b, links, nullptr);
  std::vector<std::string> out;
  for (auto* l : links) out.push_back(l->get_name());
  return out;
}

// What the parent says of a scenario's node counts: its error, or "accepted".
std::string at(const std::string& yaml) {
  const Scenario s = load_scenario_text(yaml, "s.yaml");
  try {
    check_node_counts(s, s.nodes);
  } catch (const common::ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

using Links = std::vector<std::pair<std::string, long>>;

TEST_SUITE("unit") {
  TEST_CASE("2-level fat tree at its file's capacity: dgx1-v100 at 64 nodes") {
    // 64 nodes x 4 EDR rails = 256 ports; radix 32 -> 8 leaves; radix 8 -> 1 top switch.
    const auto p = grown("dgx1-v100", 64);
    CHECK(shape_links(p) == Links{{"ft_l1", 8}, {"ft_l2", 1}});
    auto m = testing::build(p, 64);
    CHECK(built_links({"ft_l1", "ft_l2", "ft_l3", "nic"}) ==
          std::map<std::string, long>{{"ft_l1", 8}, {"ft_l2", 1}, {"ft_l3", 0}, {"nic", 256}});
  }

  TEST_CASE("2-level fat tree grown past its top switch adds a level of the top radix") {
    // 100 nodes x 4 = 400 ports: ceil(400/32) = 13 leaves, ceil(13/8) = 2 level-2 switches,
    // so one level of radix 8 is added: 1 switch on top.
    const auto p = grown("dgx1-v100", 100);
    CHECK(p.total_nodes() == 100);
    CHECK(platforms::fat_tree_levels(p.network, 400).size() == 3);
    CHECK(shape_links(p) == Links{{"ft_l1", 13}, {"ft_l2", 2}, {"ft_l3", 1}});
    auto m = testing::build(p, 100);
    CHECK(built_links({"ft_l1", "ft_l2", "ft_l3", "ft_l4"}) ==
          std::map<std::string, long>{{"ft_l1", 13}, {"ft_l2", 2}, {"ft_l3", 1}, {"ft_l4", 0}});
    // Node 0 (ports 0-3, leaf 0, level-2 switch 0) to node 99 (ports 396-399, leaf 12, level-2
    // switch 1): up to level 2, turn at the added level 3, down; ft_l3 is only the core uplink.
    const auto r = route_names(m->gpu(0, 0), m->gpu(99, 0));
    CHECK(std::find(r.begin(), r.end(), "ft_l2.s0.up") != r.end());
    CHECK(std::find(r.begin(), r.end(), "ft_l2.s1.down") != r.end());
    CHECK(std::none_of(r.begin(), r.end(),
                       [](const std::string& n) { return n.starts_with("ft_l3"); }));
  }

  TEST_CASE("3-level fat tree: Summit as built and grown to 10,000 nodes") {
    // 4,608 x 2 rails = 9,216 ports = 18 x 32 x 16: 512 leaves, 16 directors, 1 top.
    CHECK(shape_links(platforms::load_platform("summit")) ==
          Links{{"ft_l1", 512}, {"ft_l2", 16}, {"ft_l3", 1}});
    // 10,000 x 2 = 20,000 ports: ceil(20000/18) = 1,112; ceil(1112/32) = 35; ceil(35/16) = 3;
    // one added level of radix 16 on top.
    const auto p = grown("summit", 10'000);
    CHECK(p.partitions[0].nodes == 9'946);  // batch grows, highmem keeps its 54
    CHECK(p.partitions[1].nodes == 54);
    CHECK(shape_links(p) == Links{{"ft_l1", 1'112}, {"ft_l2", 35}, {"ft_l3", 3}, {"ft_l4", 1}});
    auto m = testing::build(p, 10'000);
    CHECK(m->node_count() == 10'000);
    CHECK(built_links({"ft_l1", "ft_l2", "ft_l3", "ft_l4", "nic"}) ==
          std::map<std::string, long>{
              {"ft_l1", 1'112}, {"ft_l2", 35}, {"ft_l3", 3}, {"ft_l4", 1}, {"nic", 20'000}});
    CHECK(m->partition_of(9'999) == "highmem");
    // Ports 0 and 19,998 sit under top switches 0 and 2 (9,216 ports each).
    const auto r = route_names(m->gpu(0, 0), m->gpu(9'999, 0));
    CHECK(std::find(r.begin(), r.end(), "ft_l3.s0.up") != r.end());
    CHECK(std::find(r.begin(), r.end(), "ft_l3.s2.down") != r.end());
  }

  TEST_CASE("rail-optimized: DGX H100 SuperPOD at 1,024 nodes is 32 SUs of 8 rail leaves") {
    const auto p = grown("dgx-h100-superpod", 1'024);
    const auto shape = platforms::network_shape(p.network, 1'024, 8);
    CHECK(shape.groups == 32);
    CHECK(shape.links == Links{{"ro_leaf", 256}});
    auto m = testing::build(p, 1'024);
    CHECK(built_links({"ro_leaf", "nic"}) ==
          std::map<std::string, long>{{"ro_leaf", 256}, {"nic", 8'192}});
    const auto r = route_names(m->gpu(0, 3), m->gpu(1'023, 3));
    // Same rail, different SUs: leaf (0, 3) -> spine -> leaf (31, 3).
    CHECK(std::find(r.begin(), r.end(), "ro_leaf.su0.r3.up") != r.end());
    CHECK(std::find(r.begin(), r.end(), "ro_leaf.su31.r3.down") != r.end());
  }

  TEST_CASE("dragonfly grows by groups: Perlmutter at 4,096 nodes") {
    // 4,096 x 4 NICs = 16,384 ports / 16 per router = 1,024 routers = 32 groups of 32:
    // 32 x (32 x 31 / 2) local router pairs, 32 x 31 / 2 global group pairs.
    auto p = platforms::load_platform("perlmutter");
    platforms::resize_platform(p, 4'096, "gpu");
    CHECK(p.partitions[0].nodes == 4'096 - 256);
    const auto shape = platforms::network_shape(p.network, 4'096, 4);
    CHECK(shape.groups == 32);
    CHECK(shape.links == Links{{"df_local", 15'872}, {"df_global", 496}});
  }

  TEST_CASE("resizing names the growing partition and refuses what the others hold") {
    auto h = platforms::load_platform("hetero-v100-a100");  // 16 v100 + 16 a100
    platforms::resize_platform(h, 40, "a100");
    CHECK(h.partitions[0].nodes == 16);
    CHECK(h.partitions[1].nodes == 24);
    auto s = platforms::load_platform("summit");
    CHECK_THROWS_WITH_AS(platforms::resize_platform(s, 50, ""),
                         "cannot make summit 50 nodes by resizing partition 'batch': its other "
                         "partitions hold 54 nodes, so it has at least 55",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(platforms::resize_platform(s, 5'000, "gpu"),
                         "platform 'summit' has no partition 'gpu' (it has batch, highmem)",
                         std::invalid_argument);
  }

  TEST_CASE("node counts the rule cannot build state the maximum") {
    const auto summit = platforms::load_platform("summit");
    CHECK(platforms::node_count_problem(summit, 1'000'000).empty());
    CHECK(platforms::node_count_problem(summit, 1'000'001).find("expected at most 1000000 nodes") !=
          std::string::npos);
    // A single VM: one level of radix 1 cannot add levels.
    const auto vm = platforms::load_platform("gce-v100-8gpu");
    CHECK(platforms::node_count_problem(vm, 1).empty());
    const std::string two = platforms::node_count_problem(vm, 2);
    MESSAGE(two);
    CHECK(two.find("cannot add levels") != std::string::npos);
    CHECK(two.find("(at most 1 node)") != std::string::npos);
    // Perlmutter's dragonfly at 1,000,000 nodes: 4e6 ports / 16 / 32 = 7,813 groups, so
    // 7,813 x 7,812 / 2 = 30,517,578 global + 7,813 x 496 = 3,875,248 local links.
    const auto pm = platforms::load_platform("perlmutter");
    CHECK(platforms::node_count_problem(pm, 100'000).empty());
    CHECK(platforms::node_count_problem(pm, 1'000'000) ==
          "perlmutter cannot build 1000000 nodes: its dragonfly rule would need 34392826 "
          "switch-level links, more than the 10000000 scalecast builds");
  }

  TEST_CASE("the parent rejects a node count at its scenario key") {
    const std::string head = "platform: gce-v100-8gpu\nmodel: resnet50\n";
    CHECK(at(head + "nodes: [1]\n") == "accepted");
    const std::string bad = at(head + "nodes: [1, 2]\n");
    CHECK(bad.starts_with("s.yaml:3:12: error: nodes[1]: gce-v100-8gpu cannot build 2 nodes"));
    const std::string summit = "platform: summit\nmodel: resnet50\n";
    CHECK(at(summit + "nodes: [4608, 10000]\n") == "accepted");  // fit: grows to 10,000
    const Scenario fit = load_scenario_text(summit + "nodes: [4608, 10000]\n", "s.yaml");
    const MachineSizes sizes = check_node_counts(fit, fit.nodes);
    CHECK(sizes.file_nodes == 4'608);
    CHECK(sizes.largest_nodes == 10'000);
    CHECK(at(summit + "nodes: [10000]\ncluster: {nodes: 4608}\n")
              .starts_with("s.yaml:3:9: error: nodes[0]: the point asks for 10000 nodes but "
                           "cluster.nodes makes summit 4608 nodes"));
    CHECK(at(summit + "nodes: [2]\ncluster: {nodes: 20}\n")
              .starts_with("s.yaml:4:18: error: cluster.nodes: cannot make summit 20 nodes"));
    CHECK(at(summit + "nodes: [2]\ncluster: {partition: gpu}\n")
              .starts_with("s.yaml:4:22: error: cluster.partition: platform 'summit' has no "
                           "partition 'gpu'"));
    CHECK_THROWS_WITH_AS(load_scenario_text(summit + "nodes: [1000001]\n", "s.yaml"),
                         doctest::Contains("nodes[0]: expected at most 1,000,000 (a whole number "
                                           "from 1 to 1,000,000), got 1000001"),
                         common::ConfigError);
    // A word other than `fit` got "expected a whole number", which did not mention fit.
    CHECK_THROWS_WITH_AS(
        load_scenario_text(summit + "nodes: [2]\ncluster: {nodes: FIT}\n", "s.yaml"),
        "s.yaml:4:18: error: cluster.nodes: expected a node count (1 to 1,000,000) "
        "or fit, got \"FIT\"",
        common::ConfigError);
    // Spread placement builds the whole machine: 2 nodes spread over 1,000,000 ran out of 24 GB.
    // Packed builds only the job's nodes, so the same machine size runs.
    CHECK(at(summit + "nodes: [2]\ncluster: {nodes: 300000}\nplacement: spread\n") ==
          "s.yaml:5:12: error: placement: this point builds the whole machine of 300,000 nodes "
          "(its nodes are spread over it), more than the 200,000 scalecast builds for one "
          "simulation; use placement: packed or a smaller cluster.nodes");
    CHECK(at(summit + "nodes: [2]\ncluster: {nodes: 300000}\n") == "accepted");
    CHECK(at(summit + "nodes: [2]\ncluster: {nodes: 200000}\nplacement: spread\n") == "accepted");
  }

  TEST_CASE("a packed point of more nodes than one simulation builds is an error at its nodes") {
    // nodes: [300000] grew the machine and was OOM-killed after 110 s (16 GB); a packed point
    // builds its own nodes, so only its count matters, not the machine's.
    const std::string summit = "platform: summit\nmodel: resnet50\n";
    CHECK(at(summit + "nodes: [2, 250000]\n") ==
          "s.yaml:3:12: error: nodes[1]: expected at most 200,000 nodes, got 250,000: one "
          "simulation builds at most 200,000 nodes (30-60 KB of SimGrid hosts, links and routes "
          "a node)");
    CHECK(at(summit + "nodes: [200000]\n") == "accepted");
    CHECK(at(summit + "nodes: [4]\ncluster: {nodes: 1000000}\n") == "accepted");
    // The sweep's --nodes (and an --axis point) reach the same check at their option.
    const Scenario s = load_scenario_text(summit + "nodes: [2]\n", "s.yaml");
    CHECK_THROWS_WITH_AS(check_node_counts(s, {300000}, KeyLocation{"--nodes", 0, 0, "nodes"}),
                         doctest::Contains("--nodes: error: nodes: expected at most 200,000 nodes, "
                                           "got 300,000"),
                         common::ConfigError);
  }
}

}  // namespace
}  // namespace scalecast::sim
