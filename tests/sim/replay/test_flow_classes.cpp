// Equivalence classes of flows (sim/flow_classes.hpp): colour refinement to the coarsest
// equitable partition, and the property that makes a class representative possible: max-min
// fair rates are equal within a class (checked with the progressive-filling solver,
// `max_min_rates`).

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include "sim/collective_config.hpp"
#include "sim/flow_classes.hpp"
#include "sim/ring_step_classes.hpp"

using scalecast::sim::equitable_classes;
using scalecast::sim::FlowClasses;
using scalecast::sim::FlowIncidence;
using scalecast::sim::max_min_rates;

namespace {

// The definition: every flow of a class crosses the same multiset of link classes, and every
// link of a class carries the same multiset of flow classes.
bool is_equitable(const FlowIncidence& in, const FlowClasses& c) {
  const auto multiset = [](std::vector<int> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  std::vector<std::vector<int>> flows_on(in.link_colour.size());
  for (std::size_t f = 0; f < in.routes.size(); ++f)
    for (int l : in.routes[f]) flows_on[static_cast<std::size_t>(l)].push_back(c.flow_class[f]);
  std::vector<std::vector<int>> seen_flow(static_cast<std::size_t>(c.flow_classes));
  std::vector<bool> has_flow(static_cast<std::size_t>(c.flow_classes), false);
  for (std::size_t f = 0; f < in.routes.size(); ++f) {
    std::vector<int> around;
    for (int l : in.routes[f]) around.push_back(c.link_class[static_cast<std::size_t>(l)]);
    const auto k = static_cast<std::size_t>(c.flow_class[f]);
    if (!has_flow[k]) seen_flow[k] = multiset(around), has_flow[k] = true;
    if (seen_flow[k] != multiset(around)) return false;
  }
  std::vector<std::vector<int>> seen_link(static_cast<std::size_t>(c.link_classes));
  std::vector<bool> has_link(static_cast<std::size_t>(c.link_classes), false);
  for (std::size_t l = 0; l < flows_on.size(); ++l) {
    if (c.link_class[l] < 0) continue;
    const auto k = static_cast<std::size_t>(c.link_class[l]);
    if (!has_link[k]) seen_link[k] = multiset(flows_on[l]), has_link[k] = true;
    if (seen_link[k] != multiset(flows_on[l])) return false;
  }
  return true;
}

// A ring over `nodes` nodes in leaves of `per_leaf` nodes: flow i from node i to node i + 1;
// links 0..n-1 NIC up, n..2n-1 NIC down, then per leaf one uplink and one downlink.
FlowIncidence ring_on_leaves(int nodes, int per_leaf) {
  FlowIncidence in;
  const int leaves = (nodes + per_leaf - 1) / per_leaf;
  in.link_colour.assign(static_cast<std::size_t>(2 * nodes), 1);               // NIC ports
  in.link_colour.resize(static_cast<std::size_t>(2 * nodes + 2 * leaves), 2);  // leaf links
  for (int i = 0; i < nodes; ++i) {
    const int j = (i + 1) % nodes;
    std::vector<int> route = {i, nodes + j};
    if (i / per_leaf != j / per_leaf) {
      route.push_back(2 * nodes + 2 * (i / per_leaf));      // up from i's leaf
      route.push_back(2 * nodes + 2 * (j / per_leaf) + 1);  // down into j's leaf
    }
    in.routes.push_back(route);
    in.flow_colour.push_back(7);
  }
  return in;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("flow classes: a ring on private links is one class") {
    const FlowClasses c = equitable_classes(ring_on_leaves(6, 6));
    CHECK(c.flow_classes == 1);
    CHECK(c.link_classes == 1);
    CHECK(c.link_class[12] == -1);  // the leaf's uplink carries nothing
  }

  TEST_CASE("flow classes: ring edges that leave a leaf form their own class") {
    const FlowIncidence in = ring_on_leaves(6, 3);
    const FlowClasses c = equitable_classes(in);
    CHECK(is_equitable(in, c));
    CHECK(c.flow_classes == 2);
    CHECK(c.flow_class[2] == c.flow_class[5]);  // 2 -> 3 and 5 -> 0 cross leaves
    CHECK(c.flow_class[0] == c.flow_class[1]);
    CHECK(c.flow_class[0] == c.flow_class[3]);
    CHECK(c.flow_class[0] != c.flow_class[2]);
    // NIC ports of the crossing flows differ from the others; leaf links are a class of their own.
    CHECK(c.link_classes == 3);
    CHECK(c.link_class[2] == c.link_class[6 + 3]);  // node 2 up, node 3 down
    CHECK(c.link_class[0] != c.link_class[2]);
  }

  TEST_CASE("flow classes: a shared bottleneck splits flows that look alike") {
    // Flows 0 and 1 share link 0; flow 2 has link 1 alone; same capacities and colours.
    FlowIncidence in;
    in.routes = {{0, 2}, {0, 3}, {1, 4}};
    in.flow_colour = {1, 1, 1};
    in.link_colour = {5, 5, 5, 5, 5};
    const FlowClasses c = equitable_classes(in);
    CHECK(c.flow_classes == 2);
    CHECK(c.flow_class[0] == c.flow_class[1]);
    CHECK(c.flow_class[0] != c.flow_class[2]);
    // Different initial colours never share a class.
    in.flow_colour = {1, 2, 1};
    const FlowClasses d = equitable_classes(in);
    CHECK(d.flow_classes == 3);
  }

  TEST_CASE("flow classes: max-min rates are equal within every class") {
    // Two rings (rails) on 8 nodes in leaves of 3 (the last leaf holds 2), a tapered uplink
    // (leaf links at 1.5 NIC ports' capacity, so three crossing flows share them), plus one
    // extra flow from node 0 into leaf 2 that breaks the symmetry further.
    FlowIncidence in = ring_on_leaves(8, 3);
    const FlowIncidence second = ring_on_leaves(8, 3);
    for (const auto& r : second.routes) {
      std::vector<int> shifted;
      for (int l : r) shifted.push_back(l < 16 ? l + 100 : l);  // own NIC ports, shared leaves
      in.routes.push_back(shifted);
      in.flow_colour.push_back(7);
    }
    in.link_colour.resize(116, 1);
    in.routes.push_back({0, 16, 16 + 2 * 2 + 1, 8 + 6});
    in.flow_colour.push_back(9);
    std::vector<double> capacity(in.link_colour.size(), 1.0);
    for (std::size_t l = 16; l < 22; ++l) capacity[l] = 1.5;
    const FlowClasses c = equitable_classes(in);
    CHECK(is_equitable(in, c));
    const std::vector<double> rate = max_min_rates(in, capacity);
    INFO("classes " << c.flow_classes << " of " << in.routes.size() << " flows");
    CHECK(c.flow_classes > 2);
    CHECK(c.flow_classes < static_cast<int>(in.routes.size()));
    std::vector<double> of_class(static_cast<std::size_t>(c.flow_classes), -1.0);
    bool unequal_classes = false;
    for (std::size_t f = 0; f < in.routes.size(); ++f) {
      double& r = of_class[static_cast<std::size_t>(c.flow_class[f])];
      if (r < 0.0) r = rate[f];
      CAPTURE(f);
      CHECK(rate[f] == doctest::Approx(r).epsilon(1e-12));
      unequal_classes = unequal_classes || std::abs(rate[f] - rate[0]) > 1e-9;
    }
    CHECK(unequal_classes);  // the example does have different rates
  }

  TEST_CASE("max-min rates: closed form, saturated links, refusals") {
    // Flows a (links 0, 1), b (links 1, 2), c (link 2); capacities 10, 4, 10: link 1 binds a and
    // b at 2 each, then c takes link 2's remaining 8; links 0 and 2 keep slack or fill: link 2
    // is full (2 + 8), link 0 is not (2 of 10).
    FlowIncidence in;
    in.routes = {{0, 1}, {1, 2}, {2}};
    in.flow_colour = {0, 0, 0};
    in.link_colour = {0, 1, 0};
    std::vector<bool> saturated;
    const std::vector<double> rate = max_min_rates(in, {10.0, 4.0, 10.0}, &saturated);
    CHECK(rate[0] == doctest::Approx(2.0));
    CHECK(rate[1] == doctest::Approx(2.0));
    CHECK(rate[2] == doctest::Approx(8.0));
    CHECK(saturated == std::vector<bool>{false, true, true});
    // A link listed twice counts twice: alone on a link of 6, the flow gets 3.
    FlowIncidence twice;
    twice.routes = {{0, 0}};
    twice.flow_colour = {0};
    twice.link_colour = {0};
    CHECK(max_min_rates(twice, {6.0})[0] == doctest::Approx(3.0));
    CHECK_THROWS_AS(max_min_rates(in, {10.0, 4.0}), std::invalid_argument);
    CHECK_THROWS_AS(max_min_rates(in, {10.0, 0.0, 10.0}), std::invalid_argument);
    in.routes[2] = {3};
    CHECK_THROWS_AS(max_min_rates(in, {10.0, 4.0, 10.0}), std::invalid_argument);
  }

  TEST_CASE("flow classes: malformed input is refused") {
    FlowIncidence in;
    in.routes = {{0, 3}};
    in.flow_colour = {1};
    in.link_colour = {1, 1};
    CHECK_THROWS_AS(equitable_classes(in), std::invalid_argument);
    in.routes = {{0, 1}};
    in.flow_colour = {};
    CHECK_THROWS_AS(equitable_classes(in), std::invalid_argument);
  }
}

// One step of every GPU's inter-node ring on Summit's fat tree (platforms/summit.yaml: 18 NIC
// ports per leaf switch = 9 nodes, 32 leaves per second-level switch = 288 nodes): the edges
// that stay in a leaf, those that turn at the second level, and (beyond 288 nodes) those that
// turn at the third are the classes; their count does not grow with the machine.
TEST_SUITE("unit") {
  TEST_CASE("flow classes: a ring step on 64 Summit nodes is 2 classes of 384 flows") {
    const scalecast::sim::RingStepCensus c =
        scalecast::sim::ring_step_census("summit", 64, 6, false);
    CHECK(c.flows == 384);
    CHECK(c.flow_classes == 2);
    // One max-min solve of the step saturates 256 links (measured, 4 per node), none of them
    // carrying flows of two nodes: a representative node's flows would see every constraint
    // that binds them (sim/README.md "Flow fidelity at scale").
    CHECK(c.saturated_links == 256);
    CHECK(c.saturated_shared_links == 0);
  }

  TEST_CASE("flow classes: a ring step on 300 Summit nodes is 3 classes of 1,800 flows") {
    const scalecast::sim::RingStepCensus c =
        scalecast::sim::ring_step_census("summit", 300, 6, false);
    CHECK(c.flows == 1800);
    CHECK(c.flow_classes == 3);
  }
}

// With the nodes' input in the incidence (a copy per GPU, a read per node and socket from the
// engine's rotating server): Summit's 64 nodes start 384 + 384 + 128 flows, and the rotation
// (reader k on server k mod 8) makes nodes differ, so the ring edges split into more classes
// than the two of the ring alone (bench/README.md: 504 at 4,608 nodes; 4 with one server).
TEST_SUITE("unit") {
  TEST_CASE("flow classes: input reads from rotating servers split the ring step's classes") {
    const scalecast::sim::RingStepCensus c =
        scalecast::sim::ring_step_census("summit", 64, 6, false, true);
    CHECK(c.ring_flows == 384);
    CHECK(c.flows == 384 + 384 + 128);
    CHECK(c.ring_classes > 2);
    CHECK(c.flow_classes > c.ring_classes);
  }

  TEST_CASE("flow classes: input reads need a platform with a file system") {
    CHECK_THROWS_WITH_AS(scalecast::sim::ring_step_census("dgx1-v100", 4, 8, false, true),
                         doctest::Contains("has no file system"), std::invalid_argument);
  }
  TEST_CASE("flow cost: communications per all-reduce, and the warning past two million") {
    using scalecast::sim::Algorithm;
    using scalecast::sim::Fidelity;
    using scalecast::sim::flow_communications_per_allreduce;
    using scalecast::sim::flow_cost_warning;
    // One per ring step and rank: ring G x 2(G - 1); hierarchical G x 2(g - 1) + G x 2(N - 1).
    CHECK(flow_communications_per_allreduce(Algorithm::kRing, 4, 6) == 24.0 * 46.0);
    CHECK(flow_communications_per_allreduce(Algorithm::kHierarchical, 1365, 6) ==
          8190.0 * 10.0 + 8190.0 * 2728.0);
    CHECK(flow_communications_per_allreduce(Algorithm::kTree, 16, 6) == 0.0);
    // 683 Summit nodes at flow: 5.6 million, warned, with the count and the way out.
    const std::string w = flow_cost_warning(Fidelity::kFlow, 48, Algorithm::kAuto, 683, 6);
    MESSAGE("warning: " << w);
    CHECK(w.find("683 nodes (4098 GPUs) at fidelity flow") == 0);
    CHECK(w.find("5.6 million communications per hierarchical all-reduce") != std::string::npos);
    CHECK(w.find("fidelity wave") != std::string::npos);
    // Silent: auto resolves to wave above flow_limit_gpus; small flow runs; the tree.
    CHECK(flow_cost_warning(Fidelity::kAuto, 48, Algorithm::kAuto, 683, 6).empty());
    CHECK(flow_cost_warning(Fidelity::kFlow, 48, Algorithm::kAuto, 64, 6).empty());
    CHECK(flow_cost_warning(Fidelity::kFlow, 48, Algorithm::kTree, 683, 6).empty());
    // A flat ring reaches the threshold far sooner: 1,002 GPUs post 2,006,004, 996 GPUs 1,982,040.
    CHECK_FALSE(flow_cost_warning(Fidelity::kFlow, 48, Algorithm::kRing, 167, 6).empty());
    CHECK(flow_cost_warning(Fidelity::kFlow, 48, Algorithm::kRing, 166, 6).empty());
  }
}
