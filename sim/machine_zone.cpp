#include "sim/machine_zone.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Link.hpp>
#include <stdexcept>

#include "sim/network_topology.hpp"

namespace scalecast::sim {

using platforms::NodeType;
using platforms::VertexKind;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::Route;

std::string_view link_class_of(std::string_view link_name) {
  return link_name.substr(0, link_name.find('.'));
}

MachineZone::MachineZone(const std::string& name) : NetZoneImpl(name) {}
MachineZone::~MachineZone() = default;

int MachineZone::add_duplex_link(const std::string& name, double bandwidth_Bps, double latency_s,
                                 double down_bandwidth_Bps) {
  const int id = static_cast<int>(links_.size() / 2);
  for (const char* dir : {".up", ".down"}) {
    const double bw =
        (dir[1] == 'd' && down_bandwidth_Bps >= 0) ? down_bandwidth_Bps : bandwidth_Bps;
    simgrid::s4u::Link* l = create_link(name + dir, std::vector<double>{bw});
    l->set_latency(latency_s);
    links_.push_back({l->get_impl(), latency_s});
  }
  return id;
}

int MachineZone::add_shared_link(const std::string& name, double bandwidth_Bps, double latency_s) {
  const int id = static_cast<int>(links_.size() / 2);
  simgrid::s4u::Link* l = create_link(name, std::vector<double>{bandwidth_Bps});
  l->set_latency(latency_s);
  links_.push_back({l->get_impl(), latency_s});
  links_.push_back({l->get_impl(), latency_s});
  return id;
}

void MachineZone::register_point(const NetPoint* np, Point p) {
  const auto id = static_cast<std::size_t>(np->id());
  if (points_.size() <= id) points_.resize(id + 1);
  points_[id] = p;
}

void MachineZone::add_node(const NodeType* type, const platforms::NodeRoutes* routes,
                           int first_link, int first_port, int pfs_client_link) {
  nodes_.push_back(Node{type, routes, first_link, first_port, pfs_client_link});
}

void MachineZone::set_network(std::unique_ptr<NetworkTopology> network, int nics_per_node) {
  network_ = std::move(network);
  nics_per_node_ = nics_per_node;
}

void MachineZone::set_pfs(int aggregate_link, std::vector<int> server_links) {
  pfs_aggregate_ = aggregate_link;
  pfs_servers_ = std::move(server_links);
}

void MachineZone::push(RouteSink& sink, int link, bool reverse) const {
  const Simplex& s = links_[2 * static_cast<std::size_t>(link) + (reverse ? 1 : 0)];
  sink.into->link_list_.push_back(s.impl);
  if (sink.latency != nullptr) *sink.latency += s.latency_s;
}

void MachineZone::intra(RouteSink& sink, int node, int from_vertex, int to_vertex) const {
  const Node& n = nodes_[node];
  for (const auto& hop : n.routes->route(from_vertex, to_vertex)) {
    push(sink, n.first_link + hop.link, hop.reverse);
  }
}

int MachineZone::nic_of(int node, int vertex) const {
  const NodeType& t = *nodes_[node].type;
  int nic = -1;
  switch (t.kind_of(vertex)) {
    case VertexKind::kGpu:
      nic = t.nic_of_gpu[t.index_of(vertex)];
      break;
    case VertexKind::kCpu:
      nic = t.nic_of_socket[t.index_of(vertex)];
      break;
    default:
      break;
  }
  if (nic < 0) {
    throw std::logic_error("scalecast: node type '" + t.name + "' has no NIC for " +
                           t.vertex_name(vertex) + " to leave the node");
  }
  return nic;
}

void MachineZone::to_pfs(RouteSink& sink, const Point& client, int server, bool outbound) const {
  const Node& n = nodes_[client.node];
  const int nic = nic_of(client.node, client.vertex);
  const int port = client.node * nics_per_node_ + nic;
  const int nic_vertex = n.type->vertex(VertexKind::kNic, nic);
  if (outbound) {
    intra(sink, client.node, client.vertex, nic_vertex);
    push(sink, n.first_port + nic, false);
    network_->route_core(*this, sink, port, true);
    if (n.pfs_client_link >= 0) push(sink, n.pfs_client_link, false);
    push(sink, pfs_aggregate_, false);
    push(sink, pfs_servers_[server], true);
  } else {
    push(sink, pfs_servers_[server], false);
    push(sink, pfs_aggregate_, true);
    if (n.pfs_client_link >= 0) push(sink, n.pfs_client_link, true);
    network_->route_core(*this, sink, port, false);
    push(sink, n.first_port + nic, true);
    intra(sink, client.node, nic_vertex, client.vertex);
  }
}

void MachineZone::get_local_route(const NetPoint* src, const NetPoint* dst, Route* into,
                                  double* latency) {
  RouteSink sink{into, latency};
  const Point& a = points_[src->id()];
  const Point& b = points_[dst->id()];
  using Kind = Point::Kind;
  if (a.kind == Kind::kPfsServer || b.kind == Kind::kPfsServer) {
    if (a.kind == Kind::kPfsServer && b.kind == Kind::kPfsServer) {
      if (a.vertex == b.vertex) return;
      push(sink, pfs_servers_[a.vertex], false);
      push(sink, pfs_servers_[b.vertex], true);
    } else if (a.kind == Kind::kPfsServer) {
      to_pfs(sink, b, a.vertex, false);
    } else {
      to_pfs(sink, a, b.vertex, true);
    }
    return;
  }
  if (a.node == b.node) {
    intra(sink, a.node, a.vertex, b.vertex);
    return;
  }
  const Node& na = nodes_[a.node];
  const Node& nb = nodes_[b.node];
  const int nic_a = nic_of(a.node, a.vertex);
  const int nic_b = nic_of(b.node, b.vertex);
  intra(sink, a.node, a.vertex, na.type->vertex(VertexKind::kNic, nic_a));
  push(sink, na.first_port + nic_a, false);
  network_->route(*this, sink, a.node * nics_per_node_ + nic_a, b.node * nics_per_node_ + nic_b);
  push(sink, nb.first_port + nic_b, true);
  intra(sink, b.node, nb.type->vertex(VertexKind::kNic, nic_b), b.vertex);
}

}  // namespace scalecast::sim
