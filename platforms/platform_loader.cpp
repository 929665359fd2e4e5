// Loads a platform file: resolves the name, the GPU catalog, then each section.

#include <fmt/format.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/input_file.hpp"
#include "platforms/cluster_size.hpp"
#include "platforms/data_dir.hpp"
#include "platforms/loader_parts.hpp"
#include "platforms/platform.hpp"

namespace scalecast::platforms {
namespace {

using common::ConfigError;
using common::ConfigNode;
using common::Quantity;

// The smallest network_model bandwidth_factor: a flow at 0.1 % of its bottleneck.
constexpr double kMinBandwidthFactor = 0.001;
// The most storage-server hosts a PFS is built with (storage.pfs.simulated_servers).
constexpr int kMaxSimulatedPfsServers = 10'000;

// Link classes the platform builder creates for `p` (platforms/README.md "Link names"), so a
// factor rule naming any other class, which would silently never match, is an error.
std::set<std::string> link_classes(const Platform& p) {
  std::set<std::string> c;
  for (const NodeType& t : p.node_types) {
    for (const LinkSpec& l : t.links) c.insert(l.link_class);
    if (t.nic.count > 0) c.insert("nic");
  }
  switch (p.network.topology) {
    case Topology::kFatTree:
      for (std::size_t i = 0; i < p.network.levels.size(); ++i)
        c.insert(fmt::format("ft_l{}", i + 1));
      break;
    case Topology::kRailOptimized:
      c.insert("ro_leaf");
      break;
    case Topology::kDragonfly:
      c.insert({"df_local", "df_global"});
      break;
    case Topology::kDragonflyPlus:
      c.insert({"dfp_leaf", "dfp_global"});
      break;
  }
  if (p.pfs.present) {
    c.insert({"pfs", "pfs_aggregate"});
    if (p.pfs.per_client_bandwidth_Bps > 0.0) c.insert("pfs_client");
  }
  return c;
}

NetworkModelSpec parse_network_model(const ConfigNode& node, const std::set<std::string>& classes) {
  node.check_keys({"description", "factors"});
  NetworkModelSpec spec;
  if (auto factors = node.optional("factors")) {
    for (const ConfigNode& f : factors->items()) {
      f.check_keys(
          {"class", "min_size", "max_size", "latency_factor", "bandwidth_factor", "source"});
      FactorRule r;
      r.link_class = f.string_or("class", "*");
      r.min_size_bytes =
          f.quantity_in_or("min_size", Quantity::kSize, 0.0, detail::kMaxSize_bytes, 0.0);
      if (auto v = f.optional("max_size")) {
        r.max_size_bytes = v->as_quantity_in(Quantity::kSize, 0.0, detail::kMaxSize_bytes, true);
        if (r.max_size_bytes <= r.min_size_bytes)
          v->fail(fmt::format("expected more than min_size ({}), got {}",
                              common::format_quantity(r.min_size_bytes, Quantity::kSize),
                              v->as_string()));
      }
      // SimGrid multiplies a route's latency by the latency factor (LV08's own is 13.01): below
      // 1 a message would beat the wire. The bandwidth factor is an efficiency: a flow gets at
      // most that fraction of its bottleneck; above 1 it would beat its link.
      if (auto v = f.optional("latency_factor")) {
        r.latency_factor = v->as_double();
        if (!(r.latency_factor >= 1.0 && r.latency_factor <= 1000.0))
          v->fail("expected a factor from 1 to 1000 (it multiplies the route's latency), got " +
                  v->as_string());
      }
      if (auto v = f.optional("bandwidth_factor")) {
        r.bandwidth_factor = v->as_double();
        // A flow at under 0.1 % of its link is no network; 1e-310 made every transfer take
        // 1e307 s (an inf throughput) and 1e-320 a denormal, an all-zero result.
        if (!(r.bandwidth_factor >= kMinBandwidthFactor && r.bandwidth_factor <= 1.0))
          v->fail(fmt::format(
              "expected an efficiency from {} to 1 (the fraction of the bottleneck's bandwidth "
              "a flow gets), got {}",
              kMinBandwidthFactor, v->as_string()));
      }
      if (r.link_class != "*" && !classes.count(r.link_class)) {
        f.required("class").fail(
            fmt::format("no link of this platform has class '{}' (classes: {})", r.link_class,
                        fmt::join(classes, ", ")));
      }
      spec.factors.push_back(r);
    }
  }
  return spec;
}

PfsSpec parse_pfs(const ConfigNode& node) {
  node.check_keys({"name", "servers", "simulated_servers", "read_bandwidth", "write_bandwidth",
                   "per_server_bandwidth", "per_client_bandwidth", "metadata_rate", "latency",
                   "capacity"});
  PfsSpec p;
  p.present = true;
  p.name = node.string_or("name", "pfs");
  p.servers = detail::count_at_least(node.required("servers"), 1);
  using detail::bandwidth;
  using detail::bandwidth_or;
  // Each simulated server is a host, a disk and a link; more than the real servers, or than
  // kMaxSimulatedPfsServers (the aggregate is split over them, so more only costs memory: 1e6
  // took 22 GB), is refused.
  p.simulated_servers = node.has("simulated_servers")
                            ? detail::count_in(node.required("simulated_servers"), 1,
                                               std::min(p.servers, kMaxSimulatedPfsServers))
                            : std::min(p.servers, 8);
  p.read_bandwidth_Bps = bandwidth(node.required("read_bandwidth"));
  p.write_bandwidth_Bps = bandwidth_or(node, "write_bandwidth", p.read_bandwidth_Bps);
  p.per_server_bandwidth_Bps =
      bandwidth_or(node, "per_server_bandwidth",
                   std::max(p.read_bandwidth_Bps, p.write_bandwidth_Bps) / p.simulated_servers);
  p.per_client_bandwidth_Bps = bandwidth_or(node, "per_client_bandwidth", 0.0);
  p.metadata_ops_per_s = node.quantity_in_or("metadata_rate", Quantity::kRate, 0.0,
                                             detail::kMaxRate, 0.0, /*lo_open=*/true);
  p.latency_s = detail::latency_or(node, "latency");
  p.capacity_bytes = node.quantity_in_or("capacity", Quantity::kSize, 0.0, detail::kMaxSize_bytes,
                                         0.0, /*lo_open=*/true);
  return p;
}

GpuCatalog load_catalog(const ConfigNode& root, const std::string& base_dir) {
  std::string rel = "gpus.yaml";
  std::optional<ConfigNode> where = root.optional("gpu_catalog");
  if (where) rel = where->as_string();
  std::filesystem::path p = std::filesystem::path(rel).is_absolute()
                                ? std::filesystem::path(rel)
                                : std::filesystem::path(base_dir) / rel;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec)) {
    const std::string found = find_data_file("platforms/" + rel);
    if (found.empty()) {
      const std::string msg = fmt::format(
          "GPU catalog '{}' not found next to the platform file "
          "or in platforms/ of the data directories",
          rel);
      if (where) where->fail(msg);
      root.fail(msg);
    }
    p = found;
  }
  GpuCatalog catalog = GpuCatalog::load_file(p.string(), p.lexically_normal().string());
  if (auto own = root.optional("gpus")) catalog.add_entries(*own);
  return catalog;
}

}  // namespace

std::string to_string(Topology t) {
  switch (t) {
    case Topology::kFatTree:
      return "fat_tree";
    case Topology::kRailOptimized:
      return "rail_optimized";
    case Topology::kDragonfly:
      return "dragonfly";
    case Topology::kDragonflyPlus:
      return "dragonfly_plus";
  }
  return "?";
}

int Platform::total_nodes() const {
  int n = 0;
  for (const auto& p : partitions) n += p.nodes;
  return n;
}

int Platform::max_nics_per_node() const {
  int n = 0;
  for (const auto& t : node_types) n = std::max(n, t.nic.count);
  return n;
}

int Platform::find_partition(const std::string& partition_name) const {
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    if (partitions[i].name == partition_name) return static_cast<int>(i);
  }
  return -1;
}

Platform parse_platform(const std::string& text, const std::string& display_name,
                        const std::string& base_dir) {
  const ConfigNode root = ConfigNode::load_string(text, display_name);
  if (!root.is_map()) root.fail("expected a platform description (a map)");
  root.check_keys({"name", "description", "gpu_catalog", "gpus", "node_types", "partitions",
                   "network", "network_model", "storage"});
  Platform p;
  p.file = display_name;
  p.name = root.required("name").as_string();
  p.description = root.string_or("description", "");
  const GpuCatalog catalog = load_catalog(root, base_dir);

  const ConfigNode types = root.required("node_types");
  if (!types.is_map()) types.fail("expected a map of node type name -> node type");
  std::vector<std::string> type_names;
  for (const auto& [name, node] : types.entries()) {
    p.node_types.push_back(detail::parse_node_type(name, node, catalog));
    type_names.push_back(name);
  }
  if (p.node_types.empty()) types.fail("expected at least one node type");

  const ConfigNode partitions = root.required("partitions");
  for (const ConfigNode& part : partitions.items()) {
    part.check_keys({"name", "node_type", "nodes", "description"});
    Partition q;
    q.name = part.required("name").as_string();
    if (p.find_partition(q.name) >= 0) part.required("name").fail("duplicate partition name");
    const ConfigNode type = part.required("node_type");
    const std::string t = type.as_string();
    const auto it = std::find(type_names.begin(), type_names.end(), t);
    if (it == type_names.end()) {
      type.fail(
          fmt::format("unknown node type '{}' (defined: {})", t, fmt::join(type_names, ", ")));
    }
    q.node_type = static_cast<int>(it - type_names.begin());
    q.nodes = detail::count_at_least(part.required("nodes"), 1);
    p.partitions.push_back(q);
  }
  if (p.partitions.empty()) partitions.fail("expected at least one partition");

  const ConfigNode network = root.required("network");
  p.network = detail::parse_network(network);
  // The file's own machine must be one its topology rule can build: a fat tree whose radix-1
  // top level holds fewer ports than the partitions need loaded, then failed in the engine
  // (exit 4, no place).
  const std::string problem = node_count_problem(p, p.total_nodes());
  if (!problem.empty())
    (network.has("levels") ? network.required("levels") : network).fail(problem);
  if (auto storage = root.optional("storage")) {
    storage->check_keys({"pfs"});
    if (auto pfs = storage->optional("pfs")) p.pfs = parse_pfs(*pfs);
  }
  // After the parts that create links, so factor classes can be checked against them.
  if (auto model = root.optional("network_model"))
    p.network_model = parse_network_model(*model, link_classes(p));
  return p;
}

Platform load_platform(const std::string& name_or_path) {
  std::string path = name_or_path;
  const bool is_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".yaml") == 0);
  if (!is_path) {
    path = find_data_file("platforms/" + name_or_path + ".yaml");
    if (path.empty()) {
      std::vector<std::string> dirs = data_dirs();
      throw ConfigError(name_or_path, 0, 0, "",
                        fmt::format("no platform named '{}': platforms/{}.yaml is not in {}",
                                    name_or_path, name_or_path, fmt::join(dirs, ", ")));
    }
  }
  const std::string text = common::read_input_file(path, common::kYamlMaxBytes);
  const std::string base = std::filesystem::path(path).parent_path().string();
  return parse_platform(text, path, base.empty() ? "." : base);
}

}  // namespace scalecast::platforms
