#pragma once
// MachineZone: the whole machine as ONE SimGrid netzone whose routes are computed on demand in
// get_local_route() from the topology (docs/simgrid-notes.md: nested cluster zones take 97 s to
// build Summit, one custom zone 0.19 s). Every full-duplex link is a pair of simplex links
// ("<name>.up", "<name>.down"); a link's name starts with its class ("nvlink.", "xbus.",
// "nic.", "ft_l1."...) so statistics can be kept per link class (link_class_of()).

#include <memory>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "platforms/platform.hpp"

namespace scalecast::sim {

class NetworkTopology;

// The class of a link from its name: the text before the first '.' ("nvlink", "ft_l2"...).
std::string_view link_class_of(std::string_view link_name);

// Collects the links of a route being computed.
struct RouteSink {
  simgrid::kernel::routing::Route* into = nullptr;
  double* latency = nullptr;
};

class MachineZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  // What a netpoint of this zone stands for.
  struct Point {
    enum class Kind { kNode, kPfsServer } kind = Kind::kNode;
    int node = 0;    // machine-local node number (kNode)
    int vertex = 0;  // node-type vertex (kNode) or server index (kPfsServer)
  };

  explicit MachineZone(const std::string& name);
  ~MachineZone() override;

  // --- building (before seal) ---
  // Creates a full-duplex link (two simplex links, "up" = a->b at bandwidth_Bps, "down" at
  // down_bandwidth_Bps or the same when negative); returns its id.
  int add_duplex_link(const std::string& name, double bandwidth_Bps, double latency_s,
                      double down_bandwidth_Bps = -1.0);
  // Keeps data the routes point into (node types, routes) alive as long as the zone.
  void keep_alive(std::shared_ptr<const void> data) { keep_alive_.push_back(std::move(data)); }
  // Creates a simplex link shared by both directions (an aggregate limit); returns its id.
  int add_shared_link(const std::string& name, double bandwidth_Bps, double latency_s);
  void register_point(const simgrid::kernel::routing::NetPoint* np, Point p);
  // Node n uses node type `type` (routes precomputed once per type), its intra-node links start
  // at `first_link` (in NodeType::links order) and its NIC port links at `first_port`.
  void add_node(const platforms::NodeType* type, const platforms::NodeRoutes* routes,
                int first_link, int first_port, int pfs_client_link);
  void set_network(std::unique_ptr<NetworkTopology> network, int nics_per_node);
  void set_pfs(int aggregate_link, std::vector<int> server_links);

  // --- routing ---
  void push(RouteSink& sink, int link, bool reverse) const;
  void get_local_route(const simgrid::kernel::routing::NetPoint* src,
                       const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;

 private:
  struct Node {
    const platforms::NodeType* type;
    const platforms::NodeRoutes* routes;
    int first_link;
    int first_port;
    int pfs_client_link;  // -1 when none
  };
  struct Simplex {
    simgrid::kernel::resource::StandardLinkImpl* impl;
    double latency_s;
  };
  void intra(RouteSink& sink, int node, int from_vertex, int to_vertex) const;
  int nic_of(int node, int vertex) const;
  // From a node vertex out to the network edge (or back in when !outbound).
  void to_pfs(RouteSink& sink, const Point& client, int server, bool outbound) const;

  std::vector<Simplex> links_;  // id -> [up, down] at 2*id, 2*id+1 (shared: both the same)
  std::vector<Point> points_;   // by netpoint id
  std::vector<Node> nodes_;
  std::unique_ptr<NetworkTopology> network_;
  int nics_per_node_ = 0;
  int pfs_aggregate_ = -1;
  std::vector<int> pfs_servers_;
  std::vector<std::shared_ptr<const void>> keep_alive_;
};

}  // namespace scalecast::sim
