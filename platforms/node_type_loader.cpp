// Parses a node type (platform file section `node_types.NAME`) and resolves which socket and
// which NIC rail each GPU uses.

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <utility>

#include "platforms/loader_parts.hpp"

namespace scalecast::platforms::detail {
namespace {

using common::ConfigNode;
using common::Quantity;

std::string vertex_ranges(const NodeType& t) {
  std::vector<std::string> parts;
  auto add = [&](const char* prefix, int n) {
    if (n == 1) parts.push_back(fmt::format("{}0", prefix));
    if (n > 1) parts.push_back(fmt::format("{}0..{}{}", prefix, prefix, n - 1));
  };
  add("cpu", t.cpu.sockets);
  add("gpu", t.gpu_count);
  add("pcie", t.pcie_switches);
  add("nvs", t.nvswitches);
  add("nic", t.nic.count);
  return fmt::format("{}", fmt::join(parts, ", "));
}

int parse_endpoint(const NodeType& t, const ConfigNode& node) {
  const std::string name = node.as_string();
  const int v = t.parse_vertex(name);
  if (v < 0) {
    node.fail(fmt::format("unknown endpoint '{}': node type '{}' has {}", name, t.name,
                          vertex_ranges(t)));
  }
  return v;
}

// Where each linked pair of vertices was first linked (the key path), so a second link between
// the same two vertices is an error: routes take one link per hop (the widest, then the first),
// so a second one would carry nothing, and SimGrid aborts on a repeated link name. Parallel
// bricks are `count` (or an nvlink_matrix entry) on one link.
using LinkedPairs = std::map<std::pair<int, int>, std::string>;

void check_new_pair(const NodeType& t, LinkedPairs& linked, int a, int b, const ConfigNode& where) {
  const auto key = std::minmax(a, b);
  const auto [it, inserted] = linked.emplace(key, where.path());
  if (!inserted) {
    where.fail(fmt::format(
        "{} and {} are already linked at {}: give one link per pair (its `count`, or the "
        "nvlink_matrix entry, multiplies the bandwidth)",
        t.vertex_name(a), t.vertex_name(b), it->second));
  }
}

void parse_links(NodeType& t, const ConfigNode& list, LinkedPairs& linked) {
  for (const ConfigNode& group : list.items()) {
    group.check_keys({"class", "bandwidth", "count", "latency", "between"});
    LinkSpec proto;
    proto.link_class = group.required("class").as_string();
    const int count =
        group.has("count") ? count_in(group.required("count"), 1, kMaxPartsPerNode) : 1;
    proto.bandwidth_Bps = bandwidth(group.required("bandwidth"));
    proto.bandwidth_Bps *= count;
    proto.latency_s = latency_or(group, "latency");
    for (const ConfigNode& pair : group.required("between").items()) {
      const auto ends = pair.items();
      if (ends.size() != 2) pair.fail("expected a pair of endpoints like [cpu0, gpu0]");
      LinkSpec l = proto;
      l.a = parse_endpoint(t, ends[0]);
      l.b = parse_endpoint(t, ends[1]);
      if (l.a == l.b) pair.fail("a link needs two different endpoints");
      check_new_pair(t, linked, l.a, l.b, pair);
      t.links.push_back(std::move(l));
    }
  }
}

void parse_nvlink_matrix(NodeType& t, const ConfigNode& node, LinkedPairs& linked) {
  node.check_keys({"class", "link_bandwidth", "latency", "counts"});
  const std::string cls = node.string_or("class", "nvlink");
  const double bw = bandwidth(node.required("link_bandwidth"));
  const double lat = latency_or(node, "latency");
  const ConfigNode counts = node.required("counts");
  const auto rows = counts.items();
  if (static_cast<int>(rows.size()) != t.gpu_count) {
    counts.fail(fmt::format("expected {} rows (one per GPU), got {}", t.gpu_count, rows.size()));
  }
  std::vector<std::vector<int>> m(t.gpu_count, std::vector<int>(t.gpu_count, 0));
  for (int i = 0; i < t.gpu_count; ++i) {
    const auto cols = rows[i].items();
    if (static_cast<int>(cols.size()) != t.gpu_count) {
      rows[i].fail(fmt::format("expected {} link counts, got {}", t.gpu_count, cols.size()));
    }
    for (int j = 0; j < t.gpu_count; ++j) m[i][j] = count_in(cols[j], 0, kMaxPartsPerNode);
    // A GPU linked to itself was accepted and dropped; `between: [[gpu0, gpu0]]` is an error.
    if (m[i][i] != 0)
      cols[i].fail(
          fmt::format("gpu{} cannot have NVLinks to itself; expected 0 on the diagonal", i));
  }
  for (int i = 0; i < t.gpu_count; ++i) {
    for (int j = i + 1; j < t.gpu_count; ++j) {
      if (m[i][j] != m[j][i]) {
        rows[i].fail(fmt::format("not symmetric: gpu{}-gpu{} has {} links but gpu{}-gpu{} has {}",
                                 i, j, m[i][j], j, i, m[j][i]));
      }
      if (m[i][j] == 0) continue;
      check_new_pair(t, linked, t.vertex(VertexKind::kGpu, i), t.vertex(VertexKind::kGpu, j),
                     rows[i].items()[j]);
      t.links.push_back(LinkSpec{cls, t.vertex(VertexKind::kGpu, i), t.vertex(VertexKind::kGpu, j),
                                 bw * m[i][j], lat});
    }
  }
}

std::vector<int> index_list(const ConfigNode& node, int size, int limit, const char* what) {
  const auto items = node.items();
  if (static_cast<int>(items.size()) != size) {
    node.fail(fmt::format("expected {} entries (one per GPU), got {}", size, items.size()));
  }
  std::vector<int> out;
  for (const auto& item : items) {
    const int v = count_in(item, 0, kMaxPartsPerNode);
    if (v >= limit) {
      item.fail(fmt::format("{} {} does not exist (this node type has {})", what, v, limit));
    }
    out.push_back(v);
  }
  return out;
}

// Nearest vertex of `kind` from `from`; ties go round-robin over the sources sharing the same
// candidate set, so e.g. two GPUs behind a PCIe switch with two NICs get one NIC each.
int nearest(const NodeType& t, const NodeRoutes& r, int from, VertexKind kind, int count,
            std::map<std::vector<int>, int>& ties) {
  std::vector<int> best;
  int best_d = -1;
  for (int i = 0; i < count; ++i) {
    const int d = r.distance(from, t.vertex(kind, i));
    if (d < 0) continue;
    if (best_d < 0 || d < best_d) best.clear(), best_d = d;
    if (d == best_d) best.push_back(i);
  }
  if (best.empty()) return -1;
  const int k = ties[best]++;
  return best[k % best.size()];
}

}  // namespace

NodeType parse_node_type(const std::string& name, const ConfigNode& node,
                         const GpuCatalog& catalog) {
  node.check_keys({"description", "cpu", "gpus", "pcie_switches", "nvswitches", "nics", "links",
                   "nvlink_matrix", "nvme"});
  NodeType t;
  t.name = name;
  const ConfigNode cpu = node.required("cpu");
  cpu.check_keys(
      {"model", "sockets", "cores_per_socket", "core_speed", "memory_bandwidth", "memory"});
  t.cpu.model = cpu.string_or("model", "");
  t.cpu.sockets = count_in(cpu.required("sockets"), 1, kMaxPartsPerNode);
  t.cpu.cores_per_socket = count_in(cpu.required("cores_per_socket"), 1, 100'000);
  t.cpu.core_flops = cpu.quantity_in_or("core_speed", Quantity::kFlopRate, 0.0, kMaxFlops, 1e10,
                                        /*lo_open=*/true);
  t.cpu.memory_bandwidth_Bps = bandwidth_or(cpu, "memory_bandwidth", 0.0);
  t.cpu.memory_bytes =
      cpu.quantity_in_or("memory", Quantity::kSize, 0.0, kMaxSize_bytes, 0.0, /*lo_open=*/true);

  const ConfigNode gpus = node.required("gpus");
  gpus.check_keys({"type", "count", "socket_of_gpu", "nic_of_gpu"});
  const ConfigNode type = gpus.required("type");
  const std::string key = type.as_string();
  if (!catalog.contains(key)) {
    const std::string hint = common::closest_match(key, catalog.keys());
    type.fail(fmt::format("unknown GPU type '{}'{} (catalog: {})", key,
                          hint.empty() ? "" : fmt::format(", did you mean '{}'?", hint),
                          fmt::join(catalog.keys(), ", ")));
  }
  t.gpu = catalog.at(key);
  t.gpu_count = count_in(gpus.required("count"), 1, kMaxPartsPerNode);
  t.pcie_switches = node.int_field_or("pcie_switches", 0, kMaxPartsPerNode, 0);
  t.nvswitches = node.int_field_or("nvswitches", 0, kMaxPartsPerNode, 0);

  if (auto nics = node.optional("nics")) {
    nics->check_keys({"count", "technology", "bandwidth", "latency", "rdma"});
    t.nic.count = count_in(nics->required("count"), 0, kMaxPartsPerNode);
    t.nic.technology = nics->string_or("technology", "");
    if (t.nic.count > 0) t.nic.bandwidth_Bps = bandwidth(nics->required("bandwidth"));
    t.nic.latency_s = latency_or(*nics, "latency");
    // Ethernet NICs may or may not do RoCE, and NCCL over TCP moves about half of what it moves
    // over RDMA: the file must say which (no default that could silently be wrong).
    if (t.nic.count > 0 && nic_is_ethernet(t.nic.technology) && !nics->has("rdma"))
      nics->fail(
          fmt::format("rdma: required for Ethernet NICs (technology {}): true if they "
                      "carry RoCE, false if TCP/IP only",
                      t.nic.technology));
    if (auto r = nics->optional("rdma")) {
      t.nic.rdma = r->as_bool();
      if (!t.nic.rdma && !nic_carries_tcp(t.nic.technology))
        r->fail(
            fmt::format("expected true: NICs of technology \"{}\" carry no TCP/IP here, so "
                        "without RDMA they would carry nothing",
                        t.nic.technology));
    }
  }
  if (auto nvme = node.optional("nvme")) {
    nvme->check_keys({"read_bandwidth", "write_bandwidth", "capacity"});
    t.nvme.present = true;
    t.nvme.read_Bps = bandwidth(nvme->required("read_bandwidth"));
    t.nvme.write_Bps = bandwidth(nvme->required("write_bandwidth"));
    t.nvme.capacity_bytes = nvme->quantity_in_or("capacity", Quantity::kSize, 0.0, kMaxSize_bytes,
                                                 0.0, /*lo_open=*/true);
  }
  LinkedPairs linked;
  if (auto links = node.optional("links")) parse_links(t, *links, linked);
  if (auto matrix = node.optional("nvlink_matrix")) parse_nvlink_matrix(t, *matrix, linked);

  // Every GPU must reach every CPU and GPU, every NIC a CPU: otherwise routes would not exist.
  const NodeRoutes routes = compute_node_routes(t);
  const ConfigNode where = node.optional("links").value_or(node);
  for (int v = 0; v < t.vertex_count(); ++v) {
    const VertexKind k = t.kind_of(v);
    if (k == VertexKind::kPcieSwitch || k == VertexKind::kNvSwitch) continue;
    for (int w = 0; w < t.vertex_count(); ++w) {
      const VertexKind kw = t.kind_of(w);
      const bool needed =
          kw == VertexKind::kCpu || (k != VertexKind::kNic && kw == VertexKind::kGpu);
      if (v != w && needed && routes.distance(v, w) < 0) {
        where.fail(
            fmt::format("{} has no route to {}: add a link", t.vertex_name(v), t.vertex_name(w)));
      }
    }
  }

  std::map<std::vector<int>, int> ties;
  if (auto s = gpus.optional("socket_of_gpu")) {
    t.socket_of_gpu = index_list(*s, t.gpu_count, t.cpu.sockets, "socket");
  } else {
    for (int g = 0; g < t.gpu_count; ++g) {
      t.socket_of_gpu.push_back(
          nearest(t, routes, t.vertex(VertexKind::kGpu, g), VertexKind::kCpu, t.cpu.sockets, ties));
    }
  }
  ties.clear();
  if (auto s = gpus.optional("nic_of_gpu")) {
    t.nic_of_gpu = index_list(*s, t.gpu_count, t.nic.count, "NIC");
  } else {
    for (int g = 0; g < t.gpu_count; ++g) {
      t.nic_of_gpu.push_back(
          nearest(t, routes, t.vertex(VertexKind::kGpu, g), VertexKind::kNic, t.nic.count, ties));
    }
  }
  ties.clear();
  for (int s = 0; s < t.cpu.sockets; ++s) {
    t.nic_of_socket.push_back(
        nearest(t, routes, t.vertex(VertexKind::kCpu, s), VertexKind::kNic, t.nic.count, ties));
  }
  return t;
}

}  // namespace scalecast::platforms::detail
