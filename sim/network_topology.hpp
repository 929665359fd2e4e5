#pragma once
// The inter-node network of a MachineZone: creates the switch-level links of a fat tree,
// rail-optimized leaf/spine, dragonfly or dragonfly+ and appends, for two NIC ports, the links
// between their leaf switches (the NIC-to-leaf port links themselves belong to the zone).
// Ports are numbered node * nics_per_node + rail.

#include <memory>

#include "platforms/platform.hpp"

namespace scalecast::sim {

class MachineZone;
struct RouteSink;

class NetworkTopology {
 public:
  virtual ~NetworkTopology() = default;
  // Links between the leaf switches of ports a and b (a != b), in order from a to b.
  virtual void route(const MachineZone& zone, RouteSink& sink, int port_a, int port_b) const = 0;
  // Links from a port's leaf to the network core, where storage servers attach (outbound: from
  // the port towards the core; otherwise from the core to the port).
  virtual void route_core(const MachineZone& zone, RouteSink& sink, int port,
                          bool outbound) const = 0;
};

// Builds the switch links for `ports` NIC ports of `nodes` nodes in `zone`.
std::unique_ptr<NetworkTopology> build_network_topology(MachineZone& zone,
                                                        const platforms::Network& network,
                                                        int nodes, int nics_per_node);

}  // namespace scalecast::sim
