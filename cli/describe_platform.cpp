// `scalecast describe platform NAME`: what a machine is made of, then the platform-file schema.

#include <fmt/format.h>
#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "calibration/collective_model.hpp"
#include "cli/commands.hpp"
#include "cli/describe.hpp"
#include "common/config_error.hpp"
#include "common/units.hpp"
#include "platforms/cluster_size.hpp"
#include "platforms/data_dir.hpp"
#include "platforms/platform.hpp"
#include "platforms/schema.hpp"
#include "sim/collective_config.hpp"
#include "sim/intra_rings.hpp"
#include "sim/transport.hpp"

namespace scalecast::cli {
namespace {

using common::format_quantity;
using common::Quantity;

std::string bw(double v) { return format_quantity(v, Quantity::kBandwidth); }
std::string tm(double v) { return format_quantity(v, Quantity::kTime); }
std::string fl(double v) { return format_quantity(v, Quantity::kFlopRate); }

// The rings an all-reduce inside the node runs on (sim/intra_rings.hpp): cycles of direct GPU
// links, or GPU order.
void print_rings(const platforms::NodeType& t) {
  const int n = t.gpu_count;
  if (n < 3) return;
  std::vector<std::vector<double>> direct(n, std::vector<double>(n, 0.0));
  for (const auto& l : t.links)
    if (t.kind_of(l.a) == platforms::VertexKind::kGpu &&
        t.kind_of(l.b) == platforms::VertexKind::kGpu) {
      const int a = t.index_of(l.a), b = t.index_of(l.b);
      direct[a][b] = direct[b][a] = l.bandwidth_Bps;
    }
  const auto rings =
      sim::intra_node_rings(sim::direct_link_units(direct, t.gpu.nvlink_link_bandwidth));
  if (rings.size() == 1) {
    fmt::print(
        "  rings     all-reduce in the node: one ring in GPU order (no cycle of direct GPU "
        "links)\n");
    return;
  }
  std::vector<std::string> cycles;
  for (std::size_t k = 0; k < rings.size(); k += 2)
    cycles.push_back(fmt::format("{}", fmt::join(rings[k], "-")));
  fmt::print(
      "  rings     all-reduce in the node: {} cycle(s) of direct GPU links, each also reversed: "
      "{}\n",
      cycles.size(), fmt::join(cycles, " "));
}

void print_node_type(const platforms::NodeType& t) {
  fmt::print("node type {}\n", t.name);
  fmt::print("  cpu       {} socket(s) x {} cores {}{}\n", t.cpu.sockets, t.cpu.cores_per_socket,
             t.cpu.model,
             t.cpu.memory_bytes > 0
                 ? fmt::format(", {} memory", format_quantity(t.cpu.memory_bytes, Quantity::kSize))
                 : "");
  const auto& g = t.gpu;
  fmt::print("  gpus      {} x {} (fp32 {}, tensor fp16 {}, {} at {})\n", t.gpu_count, g.name,
             fl(g.fp32_flops), fl(g.tensor_fp16_flops),
             format_quantity(g.memory_bytes, Quantity::kSize), bw(g.memory_bandwidth));
  if (!g.calibration_key.empty())
    fmt::print("            kernels priced from {}'s measurements (calibration_key)\n",
               g.calibration_key);
  fmt::print("  sockets   socket_of_gpu [{}]\n", fmt::join(t.socket_of_gpu, ", "));
  if (t.nic.count > 0) {
    fmt::print("  nics      {} x {} at {} per direction, nic_of_gpu [{}]\n", t.nic.count,
               t.nic.technology.empty() ? "NIC" : t.nic.technology, bw(t.nic.bandwidth_Bps),
               fmt::join(t.nic_of_gpu, ", "));
    if (!t.nic.rdma)
      fmt::print(
          "            no RDMA (nics.rdma: false): collectives run over TCP/IP, NCCL's socket "
          "transport at {:.2f} of the NICs' rate\n",
          sim::kNcclSocketLinkFraction);
  }
  if (t.pcie_switches + t.nvswitches > 0) {
    fmt::print("  switches  {} PCIe, {} NVSwitch\n", t.pcie_switches, t.nvswitches);
  }
  // Links grouped by class and bandwidth.
  std::map<std::pair<std::string, double>, std::vector<std::string>> groups;
  for (const auto& l : t.links) {
    groups[{l.link_class, l.bandwidth_Bps}].push_back(
        fmt::format("{}-{}", t.vertex_name(l.a), t.vertex_name(l.b)));
  }
  for (const auto& [key, pairs] : groups) {
    fmt::print("  {:<9} {} link(s) at {} per direction: {}\n", key.first, pairs.size(),
               bw(key.second), fmt::join(pairs, " "));
  }
  print_rings(t);
  if (t.nvme.present) {
    fmt::print("  nvme      read {}, write {}, {}\n", bw(t.nvme.read_Bps), bw(t.nvme.write_Bps),
               format_quantity(t.nvme.capacity_bytes, Quantity::kSize));
  }
}

void print_network(const platforms::Platform& p) {
  const auto& n = p.network;
  fmt::print("network   {}, port {}\n", platforms::to_string(n.topology), bw(n.port_bandwidth_Bps));
  switch (n.topology) {
    case platforms::Topology::kFatTree:
      for (std::size_t i = 0; i < n.levels.size(); ++i) {
        fmt::print("  level {}  radix {}, oversubscription {}:1, uplink latency {}\n", i + 1,
                   n.levels[i].radix, n.levels[i].oversubscription, tm(n.levels[i].latency_s));
      }
      break;
    case platforms::Topology::kRailOptimized:
      fmt::print("  {} nodes per scalable unit, one leaf per (unit, rail), leaf {}:1\n", n.su_nodes,
                 n.leaf_oversubscription);
      break;
    case platforms::Topology::kDragonfly:
    case platforms::Topology::kDragonflyPlus:
      fmt::print("  {} routers/leaves per group, {} ports each; global {} x {} per group pair\n",
                 n.routers_per_group, n.ports_per_router, n.global_links_per_pair,
                 bw(n.global_bandwidth_Bps));
      break;
  }
  for (const auto& f : p.network_model.factors) {
    fmt::print("  factor    class {}: bandwidth x{}, latency x{} (calibrated mode)\n", f.link_class,
               f.bandwidth_factor, f.latency_factor);
  }
}

void print_network_shape(const platforms::Platform& p) {
  const int rails = std::max(1, p.max_nics_per_node());
  const platforms::NetworkShape shape = platforms::network_shape(p.network, p.total_nodes(), rails);
  if (p.network.topology == platforms::Topology::kFatTree) {
    const auto levels =
        p.total_nodes() > 1 ? platforms::fat_tree_levels(p.network, shape.ports) : p.network.levels;
    if (levels.size() > p.network.levels.size()) {
      fmt::print("  grown     {} level(s) added with the top level's radix {} (non-blocking)\n",
                 levels.size() - p.network.levels.size(), p.network.levels.back().radix);
    }
  }
  std::string counts;
  for (const auto& [cls, n] : shape.links) {
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, cls);
  }
  fmt::print("  built     {} NIC ports{}; switch links: {}\n", shape.ports,
             shape.groups > 0 ? fmt::format(", {} units/groups", shape.groups) : "", counts);
}

// NCCL's all-reduce choice (tuning model of NCCL v2.21.5-1 src/graph/tuning.cc) by size at one
// node, a few node counts and the whole machine, on the first partition's node type: with NCCL's
// defaults, and where the fabric has SHARP, again with CollNet enabled (NCCL_COLLNET_ENABLE=1).
void print_choice_table(const platforms::Platform& p, const std::vector<int>& counts,
                        bool collnet) {
  const platforms::NodeType& t = p.node_types[p.partitions.front().node_type];
  fmt::print("  {:>9}", "size");
  for (int n : counts) fmt::print("  {:>26}", fmt::format("{} node{}", n, n > 1 ? "s" : ""));
  fmt::print("\n");
  std::vector<calibration::CollectiveModel> models;
  for (int n : counts)
    models.emplace_back(calibration::nccl_topology(p, t, n, t.gpu_count, collnet));
  for (double bytes = 8; bytes <= 4.0 * (1LL << 30); bytes *= 8) {
    fmt::print("  {:>9}", format_quantity(bytes, Quantity::kSize));
    for (const auto& m : models) {
      if (m.topology().ranks < 2) {
        fmt::print("  {:>26}", "-");
        continue;
      }
      const calibration::CollectiveChoice c = m.choose(bytes);
      fmt::print("  {:>26}", fmt::format("{}/{} {}", calibration::to_string(c.algo),
                                         calibration::to_string(c.proto), tm(c.time_s)));
    }
    fmt::print("\n");
  }
}

void print_collectives(const platforms::Platform& p) {
  const platforms::NodeType& t = p.node_types[p.partitions.front().node_type];
  const int total = p.partitions.front().nodes;
  std::vector<int> counts;
  for (int n : {1, 2, 8, 64, 512, total})
    if (n <= total && (counts.empty() || n > counts.back())) counts.push_back(n);
  const calibration::NcclTopology one = calibration::nccl_topology(p, t, 1, t.gpu_count, false);
  fmt::print(
      "all-reduce as NCCL chooses it (tuning model of NCCL v2.21.5-1; partition {}, {} GPUs per "
      "node, compute capability {}, NVLink {}, NVLS {}, SHARP in the fabric {}, {} channels):\n",
      p.partitions.front().name, t.gpu_count, one.compute_capability, one.nvlink ? "yes" : "no",
      one.nvls ? "yes" : "no", p.network.sharp ? "yes" : "no", one.channels);
  print_choice_table(p, counts, false);
  if (!t.nic.rdma)
    fmt::print(
        "(NCCL's estimates at the NICs' line rate, as its tuner sees them; the simulation moves "
        "the flows between nodes at {:.2f} of it, the socket transport's measured share)\n",
        sim::kNcclSocketLinkFraction);
  if (one.nvls && t.gpu_count >= 3)
    fmt::print(
        "(times are NCCL's estimates, which pick the algorithm; the simulation runs it on the "
        "routes: NVLS on one node moves {:.2f} of the ring's bytes per GPU, from the measured NVLS "
        "and ring bus bandwidths of a DGX H100, so it can take longer than NCCL estimates)\n",
        sim::nvls_intra_volume(t.gpu_count));
  if (!p.network.sharp) return;
  fmt::print(
      "with CollNet enabled (NCCL_COLLNET_ENABLE=1, scenario key allreduce.collnet: true; NCCL "
      "leaves it off by default):\n");
  print_choice_table(p, counts, true);
}

// Command-line misuse is exit 2 (CLI::ParseError, as CLI11's own checks): options that cannot
// apply together, and a platform named on the command line that does not exist, as `run`,
// `validate` and `describe calibration` treat a missing file.
[[noreturn]] void usage_error(const std::string& option, const std::string& message) {
  throw CLI::ValidationError(option, message);
}

void check_platform_options(const std::string& name_or_path, bool schema_only,
                            const std::optional<long>& nodes, const std::string& partition) {
  if (schema_only && !name_or_path.empty())
    usage_error("--schema", fmt::format("prints only the schema of platform files, not '{}': give "
                                        "either a platform or --schema",
                                        name_or_path));
  if (schema_only && (nodes || !partition.empty()))
    usage_error("--schema", fmt::format("prints no machine, so {} cannot apply",
                                        nodes ? "--nodes" : "--partition"));
  if (schema_only) return;
  if (name_or_path.empty()) usage_error("name", "give a platform name (e.g. summit) or --schema");
  if (!partition.empty() && !nodes)
    usage_error("--partition",
                "needs --nodes: it names the partition that grows or shrinks to that count");
  if (platforms::looks_like_path(name_or_path)) {
    if (!std::filesystem::exists(name_or_path))
      usage_error("name", "File does not exist: " + name_or_path);
    if (std::filesystem::is_directory(name_or_path))
      usage_error("name", "File is actually a directory: " + name_or_path);
  } else if (platforms::find_data_file("platforms/" + name_or_path + ".yaml").empty()) {
    usage_error("name",
                fmt::format("no platform named '{}': platforms/{}.yaml is not in {}", name_or_path,
                            name_or_path, fmt::join(platforms::data_dirs(), ", ")));
  }
}

}  // namespace

int describe_platform(const std::string& name_or_path, bool schema_only, std::optional<long> nodes,
                      const std::string& partition) {
  check_platform_options(name_or_path, schema_only, nodes, partition);
  if (!schema_only) {
    platforms::Platform p = platforms::load_platform(name_or_path);
    const int file_nodes = p.total_nodes();
    if (nodes) {
      try {
        platforms::resize_platform(p, *nodes, partition);
      } catch (const std::invalid_argument& e) {
        // The partition's name is checked first: blame --partition when it is the one unknown.
        const bool partition_error =
            std::string(e.what()).find("no partition") != std::string::npos;
        usage_error(partition_error ? "--partition" : "--nodes", e.what());
      }
    }
    fmt::print("platform  {} ({})\n", p.name, p.file);
    if (p.total_nodes() != file_nodes) {
      fmt::print("          resized from {} to {} nodes (cluster.nodes)\n", file_nodes,
                 p.total_nodes());
    }
    if (!p.description.empty()) fmt::print("          {}\n", p.description);
    int gpus = 0;
    for (const auto& part : p.partitions) {
      const auto& t = p.node_types[part.node_type];
      gpus += part.nodes * t.gpu_count;
      fmt::print("partition {}: {} x {} ({} GPUs)\n", part.name, part.nodes, t.name,
                 part.nodes * t.gpu_count);
    }
    fmt::print("total     {} nodes, {} GPUs\n\n", p.total_nodes(), gpus);
    for (const auto& t : p.node_types) print_node_type(t);
    fmt::print("\n");
    print_network(p);
    print_network_shape(p);
    if (p.pfs.present) {
      fmt::print("storage   {}: {} servers (simulated as {}), read {}, write {}\n", p.pfs.name,
                 p.pfs.servers, p.pfs.simulated_servers, bw(p.pfs.read_bandwidth_Bps),
                 bw(p.pfs.write_bandwidth_Bps));
    }
    fmt::print("\n");
    print_collectives(p);
    fmt::print("\n");
  }
  fmt::print("{}", platforms::format_schema());
  return kExitOk;
}

}  // namespace scalecast::cli
