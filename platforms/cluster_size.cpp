#include "platforms/cluster_size.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace scalecast::platforms {
namespace {

long ceil_div(long a, long b) { return (a + b - 1) / b; }

long ports_of(const Platform& p, long nodes) { return nodes * std::max(1, p.max_nics_per_node()); }

}  // namespace

std::vector<TreeLevel> fat_tree_levels(const Network& network, long ports) {
  std::vector<TreeLevel> levels = network.levels;
  if (levels.empty()) throw std::invalid_argument("a fat tree needs at least one level");
  long switches = std::max(ports, 1L);
  long capacity = 1;
  for (const TreeLevel& l : levels) {
    switches = ceil_div(switches, l.radix);
    capacity *= l.radix;
  }
  const TreeLevel top = levels.back();
  if (switches > 1 && top.radix < 2) {
    throw std::invalid_argument(fmt::format(
        "a fat tree whose top level has radix 1 cannot add levels: its {} level(s) hold at most "
        "{} NIC ports, {} are needed",
        levels.size(), capacity, ports));
  }
  while (switches > 1) {
    levels.push_back({top.radix, 1.0, top.latency_s});
    switches = ceil_div(switches, top.radix);
  }
  return levels;
}

NetworkShape network_shape(const Network& n, long nodes, int nics_per_node) {
  NetworkShape s;
  const long rails = std::max(nics_per_node, 1);
  s.ports = nodes * rails;
  switch (n.topology) {
    case Topology::kFatTree: {
      long children = s.ports;
      const auto levels = nodes > 1 ? fat_tree_levels(n, s.ports) : n.levels;
      for (std::size_t i = 0; i < levels.size(); ++i) {
        children = ceil_div(children, levels[i].radix);
        s.links.emplace_back(fmt::format("ft_l{}", i + 1), children);
      }
      break;
    }
    case Topology::kRailOptimized:
      s.groups = ceil_div(nodes, n.su_nodes);
      s.links.emplace_back("ro_leaf", s.groups * rails);
      break;
    case Topology::kDragonfly:
    case Topology::kDragonflyPlus: {
      const bool plus = n.topology == Topology::kDragonflyPlus;
      const long routers = ceil_div(s.ports, n.ports_per_router);
      s.groups = ceil_div(routers, n.routers_per_group);
      const long per = n.routers_per_group;
      if (plus) {
        s.links.emplace_back("dfp_leaf", routers);
      } else {
        s.links.emplace_back("df_local", s.groups * per * (per - 1) / 2);
      }
      s.links.emplace_back(plus ? "dfp_global" : "df_global", s.groups * (s.groups - 1) / 2);
      break;
    }
  }
  return s;
}

std::string node_count_problem(const Platform& p, long nodes) {
  if (nodes < 1) return fmt::format("expected at least 1 node, got {}", nodes);
  if (nodes > kMaxClusterNodes) {
    return fmt::format(
        "expected at most {} nodes (a larger machine is not a question scalecast answers: no "
        "GPU system comes near it and memory would run out), got {}",
        kMaxClusterNodes, nodes);
  }
  if (p.network.topology == Topology::kFatTree && nodes > 1) {
    try {
      fat_tree_levels(p.network, ports_of(p, nodes));
    } catch (const std::invalid_argument& e) {
      long capacity = 1;
      for (const TreeLevel& l : p.network.levels) capacity *= l.radix;
      const long most = std::max(1L, capacity / std::max(1, p.max_nics_per_node()));
      return fmt::format("{} cannot build {} nodes: {} (at most {} node{})", p.name, nodes,
                         e.what(), most, most == 1 ? "" : "s");
    }
  }
  const NetworkShape shape = network_shape(p.network, nodes, p.max_nics_per_node());
  long links = 0;
  for (const auto& [cls, n] : shape.links) links += n;
  if (links > kMaxSwitchLinks) {
    return fmt::format(
        "{} cannot build {} nodes: its {} rule would need {} switch-level links, more than the "
        "{} scalecast builds",
        p.name, nodes, to_string(p.network.topology), links, kMaxSwitchLinks);
  }
  return "";
}

int growing_partition(const Platform& p, const std::string& partition) {
  if (!partition.empty()) {
    const int i = p.find_partition(partition);
    if (i < 0) {
      std::vector<std::string> names;
      for (const Partition& q : p.partitions) names.push_back(q.name);
      throw std::invalid_argument(fmt::format("platform '{}' has no partition '{}' (it has {})",
                                              p.name, partition, fmt::join(names, ", ")));
    }
    return i;
  }
  int best = 0;
  for (std::size_t i = 1; i < p.partitions.size(); ++i) {
    if (p.partitions[i].nodes > p.partitions[best].nodes) best = static_cast<int>(i);
  }
  return best;
}

void resize_platform(Platform& p, long nodes, const std::string& partition) {
  const std::string problem = node_count_problem(p, nodes);
  if (!problem.empty()) throw std::invalid_argument(problem);
  const int g = growing_partition(p, partition);
  const long others = p.total_nodes() - p.partitions[g].nodes;
  if (nodes - others < 1) {
    throw std::invalid_argument(fmt::format(
        "cannot make {} {} nodes by resizing partition '{}': its other partitions hold {} nodes, "
        "so it has at least {}",
        p.name, nodes, p.partitions[g].name, others, others + 1));
  }
  p.partitions[g].nodes = static_cast<int>(nodes - others);
}

}  // namespace scalecast::platforms
