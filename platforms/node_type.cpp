#include "platforms/node_type.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

namespace scalecast::platforms {
namespace {

constexpr std::array<const char*, 5> kPrefix = {"cpu", "gpu", "pcie", "nvs", "nic"};

}  // namespace

bool nic_is_ethernet(const std::string& technology) {
  return technology == "ethernet" || technology.ends_with("gbe") || technology.ends_with("roce");
}

bool nic_carries_tcp(const std::string& technology) {
  return nic_is_ethernet(technology) || technology == "edr" || technology == "fdr" ||
         technology == "qdr" || technology.starts_with("hdr") || technology.starts_with("ndr") ||
         technology.starts_with("xdr");
}

int NodeType::vertex_count() const {
  return cpu.sockets + gpu_count + pcie_switches + nvswitches + nic.count;
}

int NodeType::vertex(VertexKind kind, int index) const {
  int base = 0;
  switch (kind) {
    case VertexKind::kNic:
      base += nvswitches;
      [[fallthrough]];
    case VertexKind::kNvSwitch:
      base += pcie_switches;
      [[fallthrough]];
    case VertexKind::kPcieSwitch:
      base += gpu_count;
      [[fallthrough]];
    case VertexKind::kGpu:
      base += cpu.sockets;
      [[fallthrough]];
    case VertexKind::kCpu:
      break;
  }
  return base + index;
}

VertexKind NodeType::kind_of(int v) const {
  if (v < cpu.sockets) return VertexKind::kCpu;
  v -= cpu.sockets;
  if (v < gpu_count) return VertexKind::kGpu;
  v -= gpu_count;
  if (v < pcie_switches) return VertexKind::kPcieSwitch;
  v -= pcie_switches;
  if (v < nvswitches) return VertexKind::kNvSwitch;
  return VertexKind::kNic;
}

int NodeType::index_of(int v) const { return v - vertex(kind_of(v), 0); }

std::string NodeType::vertex_name(int v) const {
  return fmt::format("{}{}", kPrefix[static_cast<int>(kind_of(v))], index_of(v));
}

int NodeType::parse_vertex(const std::string& text) const {
  const std::array<int, 5> counts = {cpu.sockets, gpu_count, pcie_switches, nvswitches, nic.count};
  for (std::size_t k = 0; k < kPrefix.size(); ++k) {
    const std::string_view prefix = kPrefix[k];
    if (text.size() <= prefix.size() || text.compare(0, prefix.size(), prefix) != 0) continue;
    int index = -1;
    const char* begin = text.data() + prefix.size();
    const char* end = text.data() + text.size();
    if (end - begin > 1 && *begin == '0') return -1;  // gpu00 is a typo, not gpu0
    auto [ptr, ec] = std::from_chars(begin, end, index);
    if (ec != std::errc() || ptr != end || index < 0 || index >= counts[k]) return -1;
    return vertex(static_cast<VertexKind>(k), index);
  }
  return -1;
}

NodeRoutes compute_node_routes(const NodeType& type) {
  const int n = type.vertex_count();
  NodeRoutes r;
  r.vertices = n;
  r.routes.assign(static_cast<std::size_t>(n) * n, {});
  r.hops.assign(static_cast<std::size_t>(n) * n, -1);
  // Adjacency: (neighbour, link index, reverse).
  struct Edge {
    int to, link;
    bool reverse;
  };
  std::vector<std::vector<Edge>> adj(n);
  for (int l = 0; l < static_cast<int>(type.links.size()); ++l) {
    const auto& spec = type.links[l];
    adj[spec.a].push_back({spec.b, l, false});
    adj[spec.b].push_back({spec.a, l, true});
  }
  auto transit = [&](int v) {
    const VertexKind k = type.kind_of(v);
    return k == VertexKind::kCpu || k == VertexKind::kPcieSwitch || k == VertexKind::kNvSwitch;
  };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (int src = 0; src < n; ++src) {
    // Widest-shortest path: BFS by layers, keeping the widest bottleneck per vertex.
    std::vector<int> dist(n, -1);
    std::vector<double> width(n, 0.0);
    std::vector<Edge> via(n, Edge{-1, -1, false});  // predecessor edge (to = predecessor)
    dist[src] = 0;
    width[src] = kInf;
    std::vector<int> frontier = {src};
    for (int d = 1; !frontier.empty(); ++d) {
      std::vector<int> next;
      for (int u : frontier) {
        if (u != src && !transit(u)) continue;
        for (const Edge& e : adj[u]) {
          const double w = std::min(width[u], type.links[e.link].bandwidth_Bps);
          if (dist[e.to] == -1) {
            dist[e.to] = d;
            width[e.to] = w;
            via[e.to] = Edge{u, e.link, e.reverse};
            next.push_back(e.to);
          } else if (dist[e.to] == d && w > width[e.to]) {
            width[e.to] = w;
            via[e.to] = Edge{u, e.link, e.reverse};
          }
        }
      }
      std::sort(next.begin(), next.end());
      frontier = std::move(next);
    }
    for (int dst = 0; dst < n; ++dst) {
      const std::size_t at = static_cast<std::size_t>(src) * n + dst;
      r.hops[at] = dist[dst];
      if (dist[dst] <= 0) continue;
      std::vector<NodeRoutes::Hop> path;
      for (int v = dst; v != src; v = via[v].to) path.push_back({via[v].link, via[v].reverse});
      std::reverse(path.begin(), path.end());
      r.routes[at] = std::move(path);
    }
  }
  return r;
}

}  // namespace scalecast::platforms
