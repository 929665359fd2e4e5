#include "sim/ring_step_classes.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "platforms/cluster_size.hpp"
#include "platforms/platform.hpp"
#include "sim/engine_setup.hpp"
#include "sim/flow_classes.hpp"
#include "sim/platform_builder.hpp"

namespace scalecast::sim {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

RingStepCensus ring_step_census(const std::string& name, int nodes, int gpus_per_node, bool flat,
                                bool with_io) {
  if (nodes < 2 || gpus_per_node < 1)
    throw std::invalid_argument("ring step census: needs 2 or more nodes and 1 or more GPUs");
  RingStepCensus c;
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.flat = flat;
  c.with_io = with_io;
  auto t0 = std::chrono::steady_clock::now();
  platforms::Platform machine = platforms::load_platform(name);
  c.platform = machine.name;
  if (nodes > machine.partitions.front().nodes) platforms::resize_platform(machine, nodes, "");
  auto engine = create_engine({NetworkMode::kCalibrated});
  BuildOptions options;
  options.nodes = nodes;
  auto platform = build_platform(*engine, machine, options);
  if (platform->gpus_per_node(0) < gpus_per_node)
    throw std::invalid_argument("ring step census: node type has fewer GPUs than asked");
  c.build_s = since(t0);

  t0 = std::chrono::steady_clock::now();
  FlowIncidence in;
  std::unordered_map<const simgrid::s4u::Link*, int> index;
  std::vector<const simgrid::s4u::Link*> by_index;
  std::vector<simgrid::s4u::Link*> route;
  std::vector<int> flow_node;  // the node each flow starts on (or is read for)
  const auto add = [&](simgrid::s4u::Host* from, simgrid::s4u::Host* to, std::uint64_t colour,
                       int node) {
    flow_node.push_back(node);
    route.clear();
    double latency = 0.0;
    from->route_to(to, route, &latency);
    std::vector<int> ids;
    for (const simgrid::s4u::Link* l : route) {
      const auto [it, added] = index.emplace(l, static_cast<int>(by_index.size()));
      if (added) by_index.push_back(l);
      ids.push_back(it->second);
    }
    in.routes.push_back(std::move(ids));
    in.flow_colour.push_back(colour);
  };
  const int ranks = nodes * gpus_per_node;
  for (int r = 0; r < ranks; ++r) {  // colour 0: one job, one program, one step's bytes
    const int n = r / gpus_per_node, g = r % gpus_per_node;
    const int to = flat ? (r + 1) % ranks : ((n + 1) % nodes) * gpus_per_node + g;
    add(platform->gpu(n, g), platform->gpu(to / gpus_per_node, to % gpus_per_node), 0, n);
  }
  if (with_io) {
    const std::vector<simgrid::s4u::Host*> servers = platform->pfs_servers();
    if (servers.empty())
      throw std::invalid_argument("ring step census: " + c.platform + " has no file system");
    std::size_t reader = 0;
    for (int n = 0; n < nodes; ++n) {
      std::vector<simgrid::s4u::Host*> sockets;
      for (int g = 0; g < gpus_per_node; ++g) {
        simgrid::s4u::Host* cpu = platform->cpu(n, platform->socket_of_gpu(n, g));
        add(cpu, platform->gpu(n, g), 1, n);  // colour 1: the batch's copy to the GPU
        if (std::find(sockets.begin(), sockets.end(), cpu) == sockets.end()) sockets.push_back(cpu);
      }
      for (simgrid::s4u::Host* cpu : sockets)  // colour 2: the socket's read, rotating servers
        add(servers[reader++ % servers.size()], cpu, 2, n);
    }
  }
  // A link's colour is what max-min sharing sees of it: its bandwidth and latency (equal pairs,
  // equal colour; numbered, so distinct pairs never collide).
  std::map<std::pair<double, double>, std::uint64_t> colours;
  for (const simgrid::s4u::Link* l : by_index) {
    const auto [it, added] =
        colours.emplace(std::make_pair(l->get_bandwidth(), l->get_latency()), colours.size());
    in.link_colour.push_back(it->second);
  }
  c.routes_s = since(t0);

  t0 = std::chrono::steady_clock::now();
  const FlowClasses classes = equitable_classes(in);
  c.refine_s = since(t0);
  c.ring_flows = ranks;
  c.flows = static_cast<int>(in.routes.size());
  std::vector<int> ring(classes.flow_class.begin(), classes.flow_class.begin() + ranks);
  std::sort(ring.begin(), ring.end());
  c.ring_classes = static_cast<int>(std::unique(ring.begin(), ring.end()) - ring.begin());
  c.links = static_cast<int>(by_index.size());
  c.flow_classes = classes.flow_classes;
  c.link_classes = classes.link_classes;
  c.rounds = classes.rounds;
  std::vector<double> capacity;
  for (const simgrid::s4u::Link* l : by_index) capacity.push_back(l->get_bandwidth());
  std::vector<bool> saturated;
  max_min_rates(in, capacity, &saturated);
  std::vector<int> first_node(by_index.size(), -1);
  std::vector<bool> shared(by_index.size(), false);
  for (std::size_t f = 0; f < in.routes.size(); ++f)
    for (int l : in.routes[f]) {
      int& first = first_node[static_cast<std::size_t>(l)];
      if (first < 0) first = flow_node[f];
      if (first != flow_node[f]) shared[static_cast<std::size_t>(l)] = true;
    }
  for (std::size_t l = 0; l < by_index.size(); ++l)
    if (saturated[l]) {
      ++c.saturated_links;
      if (shared[l]) ++c.saturated_shared_links;
    }
  keep_engine_until_exit(std::move(engine));
  return c;
}

}  // namespace scalecast::sim
