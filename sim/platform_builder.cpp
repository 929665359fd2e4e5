#include "sim/platform_builder.hpp"

#include <fmt/format.h>
#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <stdexcept>

#include "sim/machine_zone.hpp"
#include "sim/network_factors.hpp"
#include "sim/network_topology.hpp"

namespace scalecast::sim {

using platforms::NodeType;
using platforms::VertexKind;

void MachinePlatform::check_node(int node) const {
  if (node < 0 || node >= node_count()) {
    throw std::out_of_range(fmt::format("node {} out of range (0..{})", node, node_count() - 1));
  }
}

const NodeType& MachinePlatform::node_type(int node) const {
  check_node(node);
  return platform_->node_types[nodes_[node].type];
}

int MachinePlatform::gpus_per_node(int node) const { return node_type(node).gpu_count; }

simgrid::s4u::Host* MachinePlatform::gpu(int node, int local_gpu) const {
  if (local_gpu < 0 || local_gpu >= gpus_per_node(node)) {
    throw std::out_of_range(fmt::format("node {} has no GPU {}", node, local_gpu));
  }
  return gpus_[nodes_[node].first_gpu + local_gpu];
}

simgrid::s4u::Host* MachinePlatform::cpu(int node, int socket) const {
  if (socket < 0 || socket >= sockets(node)) {
    throw std::out_of_range(fmt::format("node {} has no socket {}", node, socket));
  }
  return cpus_[nodes_[node].first_cpu + socket];
}

int MachinePlatform::socket_of_gpu(int node, int local_gpu) const {
  gpu(node, local_gpu);  // range check
  return node_type(node).socket_of_gpu[local_gpu];
}

int MachinePlatform::nic_of_gpu(int node, int local_gpu) const {
  gpu(node, local_gpu);
  return node_type(node).nic_of_gpu[local_gpu];
}

simgrid::s4u::Disk* MachinePlatform::nvme(int node) const {
  check_node(node);
  return nodes_[node].nvme;
}

std::string MachinePlatform::gpu_type(int node) const { return node_type(node).gpu.name; }
double MachinePlatform::gpu_link_unit_Bps(int node) const {
  return node_type(node).gpu.nvlink_link_bandwidth;
}

const std::string& MachinePlatform::partition_of(int node) const {
  check_node(node);
  return platform_->partitions[nodes_[node].partition].name;
}

namespace {

// (partition, node type) of each node to build, partition after partition.
std::vector<std::pair<int, int>> select_nodes(const platforms::Platform& p,
                                              const BuildOptions& options) {
  std::vector<int> parts;
  if (options.partition.empty()) {
    for (std::size_t i = 0; i < p.partitions.size(); ++i) parts.push_back(static_cast<int>(i));
  } else {
    const int i = p.find_partition(options.partition);
    if (i < 0) {
      throw std::invalid_argument(
          fmt::format("platform '{}' has no partition '{}'", p.name, options.partition));
    }
    parts.push_back(i);
  }
  int available = 0;
  for (int i : parts) available += p.partitions[i].nodes;
  const int wanted = options.nodes == 0 ? available : options.nodes;
  if (wanted < 1 || wanted > available) {
    throw std::invalid_argument(
        fmt::format("cannot build {} nodes of '{}{}': it has {}", options.nodes, p.name,
                    options.partition.empty() ? "" : "/" + options.partition, available));
  }
  std::vector<std::pair<int, int>> out;
  for (int i : parts) {
    for (int k = 0; k < p.partitions[i].nodes && static_cast<int>(out.size()) < wanted; ++k) {
      out.emplace_back(i, p.partitions[i].node_type);
    }
  }
  return out;
}

struct SharedState {
  std::shared_ptr<const platforms::Platform> platform;
  std::vector<platforms::NodeRoutes> routes;  // per node type
};

}  // namespace

std::unique_ptr<MachinePlatform> build_platform(simgrid::s4u::Engine& engine,
                                                const platforms::Platform& platform,
                                                const BuildOptions& options) {
  if (engine.get_netzone_root() != nullptr) {
    throw std::logic_error(
        "build_platform: this engine already has a platform (SimGrid allows "
        "one engine, and here one platform, per process)");
  }
  const auto chosen = select_nodes(platform, options);
  auto state = std::make_shared<SharedState>();
  state->platform = std::make_shared<const platforms::Platform>(platform);
  for (const auto& t : state->platform->node_types) {
    state->routes.push_back(platforms::compute_node_routes(t));
  }
  const platforms::Platform& p = *state->platform;
  const int nics = p.max_nics_per_node();
  const int nodes = static_cast<int>(chosen.size());

  if (nodes > 1) {
    for (const auto& [partition, type_index] : chosen) {
      if (p.node_types[type_index].nic.count == 0) {
        throw std::invalid_argument(
            fmt::format("platform '{}': node type '{}' has no NIC, so {} nodes cannot talk", p.name,
                        p.node_types[type_index].name, nodes));
      }
    }
  }
  configure_network_model(options.network);
  auto* zone = new MachineZone(p.name);  // the first zone becomes the root; the engine owns it
  zone->keep_alive(state);

  auto out = std::unique_ptr<MachinePlatform>(new MachinePlatform());
  out->platform_ = state->platform;
  out->mode_ = options.network;
  out->nodes_.reserve(nodes);
  std::vector<std::string> class_names;
  for (int n = 0; n < nodes; ++n) {
    const auto [partition, type_index] = chosen[n];
    const NodeType& t = p.node_types[type_index];
    MachinePlatform::NodeInfo info{type_index, partition, static_cast<int>(out->gpus_.size()),
                                   static_cast<int>(out->cpus_.size()), nullptr};
    for (int s = 0; s < t.cpu.sockets; ++s) {
      simgrid::s4u::Host* h = zone->create_host(fmt::format("n{}.cpu{}", n, s), {t.cpu.core_flops});
      h->set_core_count(t.cpu.cores_per_socket);
      zone->register_point(h->get_netpoint(),
                           {MachineZone::Point::Kind::kNode, n, t.vertex(VertexKind::kCpu, s)});
      out->cpus_.push_back(h);
    }
    const double gpu_speed = t.gpu.fp32_flops > 0 ? t.gpu.fp32_flops : 1e12;
    for (int g = 0; g < t.gpu_count; ++g) {
      simgrid::s4u::Host* h = zone->create_host(fmt::format("n{}.gpu{}", n, g), {gpu_speed});
      zone->register_point(h->get_netpoint(),
                           {MachineZone::Point::Kind::kNode, n, t.vertex(VertexKind::kGpu, g)});
      out->gpus_.push_back(h);
    }
    int first_link = -1;
    for (const auto& l : t.links) {
      const int id = zone->add_duplex_link(
          fmt::format("{}.n{}.{}-{}", l.link_class, n, t.vertex_name(l.a), t.vertex_name(l.b)),
          l.bandwidth_Bps, l.latency_s);
      if (first_link < 0) first_link = id;
    }
    int first_port = -1;
    for (int r = 0; r < t.nic.count; ++r) {
      const int id = zone->add_duplex_link(fmt::format("nic.n{}.r{}", n, r), t.nic.bandwidth_Bps,
                                           t.nic.latency_s);
      if (first_port < 0) first_port = id;
    }
    int client = -1;
    if (p.pfs.present && p.pfs.per_client_bandwidth_Bps > 0) {
      client = zone->add_duplex_link(fmt::format("pfs_client.n{}", n),
                                     p.pfs.per_client_bandwidth_Bps, 0.0);
    }
    if (t.nvme.present) {
      info.nvme = out->cpus_[info.first_cpu]->create_disk(fmt::format("n{}.nvme", n),
                                                          t.nvme.read_Bps, t.nvme.write_Bps);
      info.nvme->seal();
    }
    zone->add_node(&t, &state->routes[type_index], first_link, first_port, client);
    out->nodes_.push_back(info);
  }
  zone->set_network(build_network_topology(*zone, p.network, nodes, nics), nics);

  if (p.pfs.present) {
    const auto& f = p.pfs;
    const int servers = f.simulated_servers;
    // Up (client -> server) carries writes, down carries reads.
    const int aggregate = zone->add_duplex_link("pfs_aggregate.all", f.write_bandwidth_Bps, 0.0,
                                                f.read_bandwidth_Bps);
    std::vector<int> server_links;
    for (int k = 0; k < servers; ++k) {
      simgrid::s4u::Host* h = zone->create_host(fmt::format("pfs.server{}", k), {1e10});
      zone->register_point(h->get_netpoint(), {MachineZone::Point::Kind::kPfsServer, -1, k});
      server_links.push_back(zone->add_duplex_link(fmt::format("pfs.s{}", k),
                                                   f.per_server_bandwidth_Bps, f.latency_s));
      simgrid::s4u::Disk* d =
          h->create_disk(fmt::format("pfs.server{}.disk", k), f.read_bandwidth_Bps / servers,
                         f.write_bandwidth_Bps / servers);
      d->seal();
      out->pfs_servers_.push_back(h);
      out->pfs_disks_.push_back(d);
    }
    zone->set_pfs(aggregate, std::move(server_links));
  }
  zone->seal();
  if (options.network == NetworkMode::kCalibrated) install_network_factors(engine, p.network_model);
  return out;
}

}  // namespace scalecast::sim
