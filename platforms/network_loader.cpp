// Parses the `network` section of a platform file: topology and its parameters.

#include <fmt/format.h>
#include <charconv>

#include "platforms/loader_parts.hpp"

namespace scalecast::platforms::detail {
namespace {

using common::ConfigNode;
using common::Quantity;

void parse_global_link(Network& n, const ConfigNode& node) {
  node.check_keys({"bandwidth", "latency", "links_per_group_pair"});
  n.global_bandwidth_Bps = bandwidth(node.required("bandwidth"));
  n.global_latency_s = latency_or(node, "latency");
  n.global_links_per_pair = node.has("links_per_group_pair")
                                ? count_at_least(node.required("links_per_group_pair"), 1)
                                : 1;
}

}  // namespace

int count_at_least(const ConfigNode& node, int minimum) {
  return node.as_int_field(minimum, 100'000'000);
}

int count_in(const ConfigNode& node, int lo, int hi) { return node.as_int_field(lo, hi); }

double bandwidth(const ConfigNode& node) {
  return node.as_quantity_in(Quantity::kBandwidth, kMinBandwidth_Bps, kMaxBandwidth_Bps);
}

double bandwidth_or(const ConfigNode& map, const char* key, double fallback) {
  const auto v = map.optional(key);
  return v ? bandwidth(*v) : fallback;
}

double latency_or(const ConfigNode& map, const char* key) {
  return map.quantity_in_or(key, Quantity::kTime, 0.0, kMaxLatency_s, 0.0);
}

double parse_ratio(const ConfigNode& node) {
  const std::string text = node.as_string();
  double down = 0.0, up = 1.0;
  const auto colon = text.find(':');
  bool ok = false;
  if (colon == std::string::npos) {
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), down);
    ok = ec == std::errc() && p == text.data() + text.size();
  } else {
    auto [p1, e1] = std::from_chars(text.data(), text.data() + colon, down);
    auto [p2, e2] = std::from_chars(text.data() + colon + 1, text.data() + text.size(), up);
    ok = e1 == std::errc() && e2 == std::errc() && p1 == text.data() + colon &&
         p2 == text.data() + text.size() && up > 0;
  }
  // from_chars reads "inf" and "nan" too: the range check is written to reject them.
  if (!ok || !(down / up >= 1.0 && down / up <= kMaxRatio)) {
    node.fail(fmt::format("expected a down:up ratio from 1 to {:g} like 2 or \"2:1\", got \"{}\"",
                          kMaxRatio, text));
  }
  return down / up;
}

Network parse_network(const ConfigNode& node) {
  Network n;
  const ConfigNode topo = node.required("topology");
  const std::string t = topo.as_string();
  const std::vector<std::string> common_keys = {"topology", "port_bandwidth", "description",
                                                "sharp"};
  std::vector<std::string> keys = common_keys;
  if (t == "fat_tree") {
    n.topology = Topology::kFatTree;
    keys.push_back("levels");
  } else if (t == "rail_optimized") {
    n.topology = Topology::kRailOptimized;
    keys.insert(keys.end(), {"su_nodes", "leaf_oversubscription", "leaf_uplink_latency"});
  } else if (t == "dragonfly") {
    n.topology = Topology::kDragonfly;
    keys.insert(keys.end(), {"routers_per_group", "ports_per_router", "local_link", "global_link"});
  } else if (t == "dragonfly_plus") {
    n.topology = Topology::kDragonflyPlus;
    keys.insert(keys.end(), {"leaves_per_group", "ports_per_leaf", "leaf_oversubscription",
                             "leaf_uplink_latency", "global_link"});
  } else {
    topo.fail(fmt::format(
        "unknown topology '{}' (expected fat_tree, rail_optimized, dragonfly or dragonfly_plus)",
        t));
  }
  node.check_keys(keys);
  n.port_bandwidth_Bps = bandwidth(node.required("port_bandwidth"));
  n.sharp = node.bool_or("sharp", false);
  switch (n.topology) {
    case Topology::kFatTree:
      // Uplinks aggregate radix x child bandwidth per level: at most 8 levels of radix up to
      // 1,000,000 keep every aggregate finite (real fat trees have 2-4 levels).
      if (node.required("levels").items().size() > 8)
        node.required("levels").fail(fmt::format("expected at most 8 levels, got {}",
                                                 node.required("levels").items().size()));
      for (const ConfigNode& level : node.required("levels").items()) {
        level.check_keys({"radix", "oversubscription", "latency"});
        TreeLevel l;
        l.radix = count_in(level.required("radix"), 1, 1'000'000);
        if (auto o = level.optional("oversubscription")) l.oversubscription = parse_ratio(*o);
        l.latency_s = latency_or(level, "latency");
        n.levels.push_back(l);
      }
      if (n.levels.empty()) node.required("levels").fail("expected at least one level");
      break;
    case Topology::kRailOptimized:
      n.su_nodes = count_at_least(node.required("su_nodes"), 1);
      if (auto o = node.optional("leaf_oversubscription"))
        n.leaf_oversubscription = parse_ratio(*o);
      n.leaf_uplink_latency_s = latency_or(node, "leaf_uplink_latency");
      break;
    case Topology::kDragonfly: {
      n.routers_per_group = count_at_least(node.required("routers_per_group"), 1);
      n.ports_per_router = count_at_least(node.required("ports_per_router"), 1);
      const ConfigNode local = node.required("local_link");
      local.check_keys({"bandwidth", "latency"});
      n.local_bandwidth_Bps = bandwidth(local.required("bandwidth"));
      n.local_latency_s = latency_or(local, "latency");
      parse_global_link(n, node.required("global_link"));
      break;
    }
    case Topology::kDragonflyPlus:
      n.routers_per_group = count_at_least(node.required("leaves_per_group"), 1);
      n.ports_per_router = count_at_least(node.required("ports_per_leaf"), 1);
      if (auto o = node.optional("leaf_oversubscription"))
        n.leaf_oversubscription = parse_ratio(*o);
      n.local_latency_s = latency_or(node, "leaf_uplink_latency");
      parse_global_link(n, node.required("global_link"));
      break;
  }
  return n;
}

}  // namespace scalecast::platforms::detail
