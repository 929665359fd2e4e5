#include "sim/network_topology.hpp"

#include <fmt/format.h>
#include <stdexcept>
#include <vector>

#include "platforms/cluster_size.hpp"
#include "sim/machine_zone.hpp"

namespace scalecast::sim {
namespace {

using platforms::Network;
using platforms::Topology;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Fat tree of aggregated switches: level i groups `radix` children; each switch has one
// uplink whose capacity is radix x child capacity / oversubscription (tapering). A route climbs
// to the lowest common switch. Levels are added (platforms::fat_tree_levels) until one switch is
// on top, whose uplink leads to the core where storage attaches.
class FatTree final : public NetworkTopology {
 public:
  // One node has no inter-node route: its NIC ports hang under the file's levels as they are.
  FatTree(MachineZone& zone, const Network& net, int nodes, int ports)
      : levels_(nodes > 1 ? platforms::fat_tree_levels(net, ports) : net.levels) {
    double child_bw = net.port_bandwidth_Bps;
    int children = ports;
    for (std::size_t i = 0; i < levels_.size(); ++i) {
      const int switches = ceil_div(children, levels_[i].radix);
      const double up_bw = levels_[i].radix * child_bw / levels_[i].oversubscription;
      first_.push_back(-1);
      for (int s = 0; s < switches; ++s) {
        const int id =
            zone.add_duplex_link(fmt::format("ft_l{}.s{}", i + 1, s), up_bw, levels_[i].latency_s);
        if (s == 0) first_.back() = id;
      }
      child_bw = up_bw;
      children = switches;
    }
  }
  void route(const MachineZone& zone, RouteSink& sink, int a, int b) const override {
    const int n = static_cast<int>(levels_.size());
    int sa = a, sb = b;
    std::vector<int> down;
    for (int i = 0; i < n; ++i) {
      sa /= levels_[i].radix;
      sb /= levels_[i].radix;
      if (sa == sb) break;  // lowest common switch: turn around here
      zone.push(sink, first_[i] + sa, false);
      down.push_back(first_[i] + sb);
    }
    for (auto it = down.rbegin(); it != down.rend(); ++it) zone.push(sink, *it, true);
  }
  void route_core(const MachineZone& zone, RouteSink& sink, int port,
                  bool outbound) const override {
    std::vector<int> ups;
    int s = port;
    for (std::size_t i = 0; i < levels_.size(); ++i) {
      s /= levels_[i].radix;
      ups.push_back(first_[i] + s);
    }
    if (outbound) {
      for (int id : ups) zone.push(sink, id, false);
    } else {
      for (auto it = ups.rbegin(); it != ups.rend(); ++it) zone.push(sink, *it, true);
    }
  }

 private:
  std::vector<platforms::TreeLevel> levels_;
  std::vector<int> first_;  // first uplink id per level
};

// Rail-optimized leaf/spine: rail r of the nodes of scalable unit u plugs into leaf (u, r);
// leaves meet in a non-blocking spine through uplinks tapered by leaf_oversubscription.
class RailOptimized final : public NetworkTopology {
 public:
  RailOptimized(MachineZone& zone, const Network& net, int nodes, int rails)
      : su_(net.su_nodes), rails_(rails) {
    const double up_bw = su_ * net.port_bandwidth_Bps / net.leaf_oversubscription;
    const int units = ceil_div(nodes, su_);
    for (int u = 0; u < units; ++u) {
      for (int r = 0; r < rails; ++r) {
        const int id = zone.add_duplex_link(fmt::format("ro_leaf.su{}.r{}", u, r), up_bw,
                                            net.leaf_uplink_latency_s);
        if (u == 0 && r == 0) first_ = id;
      }
    }
  }
  int leaf(int port) const { return (port / rails_) / su_ * rails_ + port % rails_; }
  void route(const MachineZone& zone, RouteSink& sink, int a, int b) const override {
    if (leaf(a) == leaf(b)) return;
    zone.push(sink, first_ + leaf(a), false);
    zone.push(sink, first_ + leaf(b), true);
  }
  void route_core(const MachineZone& zone, RouteSink& sink, int port,
                  bool outbound) const override {
    zone.push(sink, first_ + leaf(port), !outbound);
  }

 private:
  int su_, rails_, first_ = 0;
};

// Index of the unordered pair (i, j), i < j, among n items.
long pair_index(long i, long j, long n) { return i * (2 * n - i - 1) / 2 + (j - i - 1); }

// Dragonfly (routers all-to-all in a group) and dragonfly+ (group = leaves under one spine
// layer): minimal routing over one aggregated global link per pair of groups.
class Dragonfly final : public NetworkTopology {
 public:
  Dragonfly(MachineZone& zone, const Network& net, int ports)
      : plus_(net.topology == Topology::kDragonflyPlus),
        per_group_(net.routers_per_group),
        ports_(net.ports_per_router) {
    const int routers = ceil_div(ports, ports_);
    groups_ = ceil_div(routers, per_group_);
    if (plus_) {
      const double up_bw = ports_ * net.port_bandwidth_Bps / net.leaf_oversubscription;
      for (int l = 0; l < routers; ++l) {
        const int id =
            zone.add_duplex_link(fmt::format("dfp_leaf.l{}", l), up_bw, net.local_latency_s);
        if (l == 0) first_local_ = id;
      }
    } else {
      for (int g = 0; g < groups_; ++g) {
        for (int i = 0; i < per_group_; ++i) {
          for (int j = i + 1; j < per_group_; ++j) {
            const int id = zone.add_duplex_link(fmt::format("df_local.g{}.r{}-r{}", g, i, j),
                                                net.local_bandwidth_Bps, net.local_latency_s);
            if (g == 0 && i == 0 && j == 1) first_local_ = id;
          }
        }
      }
    }
    const char* cls = plus_ ? "dfp_global" : "df_global";
    for (int g = 0; g < groups_; ++g) {
      for (int h = g + 1; h < groups_; ++h) {
        const int id = zone.add_duplex_link(fmt::format("{}.g{}-g{}", cls, g, h),
                                            net.global_bandwidth_Bps * net.global_links_per_pair,
                                            net.global_latency_s);
        if (g == 0 && h == 1) first_global_ = id;
      }
    }
  }
  void local(const MachineZone& zone, RouteSink& sink, int group, int i, int j) const {
    if (i == j) return;
    const long per = static_cast<long>(per_group_) * (per_group_ - 1) / 2;
    const long lo = std::min(i, j), hi = std::max(i, j);
    zone.push(sink, static_cast<int>(first_local_ + group * per + pair_index(lo, hi, per_group_)),
              i > j);
  }
  void global(const MachineZone& zone, RouteSink& sink, int g, int h) const {
    const long lo = std::min(g, h), hi = std::max(g, h);
    zone.push(sink, static_cast<int>(first_global_ + pair_index(lo, hi, groups_)), g > h);
  }
  // Router of group g holding the global link towards group h.
  int owner(int g, int h) const { return ((h - g - 1 + groups_) % groups_) % per_group_; }

  void route(const MachineZone& zone, RouteSink& sink, int a, int b) const override {
    const int ra = a / ports_, rb = b / ports_;
    if (ra == rb) return;
    const int ga = ra / per_group_, gb = rb / per_group_;
    if (plus_) {
      zone.push(sink, first_local_ + ra, false);
      if (ga != gb) global(zone, sink, ga, gb);
      zone.push(sink, first_local_ + rb, true);
      return;
    }
    const int ia = ra % per_group_, ib = rb % per_group_;
    if (ga == gb) {
      local(zone, sink, ga, ia, ib);
      return;
    }
    local(zone, sink, ga, ia, owner(ga, gb));
    global(zone, sink, ga, gb);
    local(zone, sink, gb, owner(gb, ga), ib);
  }
  void route_core(const MachineZone& zone, RouteSink& sink, int port,
                  bool outbound) const override {
    // Dragonfly: storage is reached from every router directly (storage nodes sit in the
    // groups); dragonfly+: through the leaf uplink to the group's spine.
    if (plus_) zone.push(sink, first_local_ + port / ports_, !outbound);
  }

 private:
  bool plus_;
  int per_group_, ports_, groups_ = 1;
  int first_local_ = 0, first_global_ = 0;
};

}  // namespace

std::unique_ptr<NetworkTopology> build_network_topology(MachineZone& zone, const Network& net,
                                                        int nodes, int nics_per_node) {
  const int ports = nodes * std::max(nics_per_node, 1);
  switch (net.topology) {
    case Topology::kFatTree:
      return std::make_unique<FatTree>(zone, net, nodes, ports);
    case Topology::kRailOptimized:
      return std::make_unique<RailOptimized>(zone, net, nodes, std::max(nics_per_node, 1));
    case Topology::kDragonfly:
    case Topology::kDragonflyPlus:
      return std::make_unique<Dragonfly>(zone, net, ports);
  }
  throw std::logic_error("unknown topology");
}

}  // namespace scalecast::sim
