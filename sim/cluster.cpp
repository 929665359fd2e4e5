#include "sim/cluster.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "platforms/cluster_size.hpp"

namespace scalecast::sim {

long machine_nodes(const Scenario& s, const platforms::Platform& file_platform, int nodes) {
  if (s.cluster_nodes > 0) return s.cluster_nodes;
  return std::max<long>(file_platform.total_nodes(), nodes);
}

platforms::Platform sized_platform(const Scenario& s, const platforms::Platform& file_platform,
                                   int nodes) {
  if (nodes < 1)
    throw std::invalid_argument(fmt::format("expected at least 1 node, got {}", nodes));
  // Whatever the placement, a point builds at least its own nodes: a point process started on
  // its own (validate's children) is refused here rather than run out of memory.
  if (nodes > platforms::kMaxBuiltNodes)
    throw std::invalid_argument(
        fmt::format("a point of {} nodes builds them all, more than the {} one simulation builds",
                    common::format_count(nodes), common::format_count(platforms::kMaxBuiltNodes)));
  const long size = machine_nodes(s, file_platform, nodes);
  if (nodes > size) {
    throw std::invalid_argument(fmt::format(
        "the point asks for {} nodes but cluster.nodes makes {} {} nodes (raise cluster.nodes or "
        "give `fit`)",
        nodes, file_platform.name, size));
  }
  platforms::Platform p = file_platform;
  if (size != p.total_nodes()) platforms::resize_platform(p, size, s.cluster_partition);
  return p;
}

std::optional<platforms::Platform> sized_platform_if_any(const Scenario& s,
                                                         const platforms::Platform& file_platform,
                                                         int nodes) {
  try {
    return sized_platform(s, file_platform, nodes);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

namespace {

[[noreturn]] void fail_at(const KeyLocation& at, const std::string& message) {
  throw common::ConfigError(at.file, at.line, at.column, at.key, message);
}

}  // namespace

MachineSizes check_node_counts(const Scenario& s, const std::vector<int>& nodes,
                               const std::optional<KeyLocation>& at) {
  const platforms::Platform file_platform = platforms::load_platform(s.platform);
  MachineSizes sizes{file_platform.total_nodes(), file_platform.total_nodes(), s.gpus_per_node};
  int partition = 0;
  try {
    partition = platforms::growing_partition(file_platform, s.cluster_partition);
  } catch (const std::invalid_argument& e) {
    fail_at(s.cluster_partition_at, e.what());
  }
  if (sizes.gpus_per_node <= 0 && !file_platform.partitions.empty()) {
    const auto& part = file_platform.partitions.at(static_cast<std::size_t>(partition));
    sizes.gpus_per_node =
        file_platform.node_types.at(static_cast<std::size_t>(part.node_type)).gpu_count;
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const KeyLocation& key = at                      ? *at
                             : i < s.nodes_at.size() ? s.nodes_at[i]
                                                     : KeyLocation{s.source_file, 0, 0, "nodes"};
    const int n = nodes[i];
    if (n < 1 || n > platforms::kMaxClusterNodes) {
      fail_at(key, platforms::node_count_problem(file_platform, n));
    }
    // A packed point builds its own nodes (and its parameter servers' CPU nodes) whatever the
    // machine's size: a 300,000-node point grew the machine and ran out of memory.
    const ParameterServerConfig& ps = s.parameter_server;
    const long ps_own = ps.tasks > 0 && ps.placement == PsPlacement::kCpu ? ps.tasks : 0;
    if (n + ps_own > platforms::kMaxBuiltNodes) {
      fail_at(key, fmt::format(
                       "expected at most {} nodes{}, got {}: one simulation builds at most "
                       "{} nodes (30-60 KB of SimGrid hosts, links and routes a node)",
                       common::format_count(platforms::kMaxBuiltNodes - ps_own),
                       ps_own > 0 ? fmt::format(" beside the {} parameter-server nodes", ps_own)
                                  : std::string(),
                       common::format_count(n), common::format_count(platforms::kMaxBuiltNodes)));
    }
    try {
      sized_platform(s, file_platform, n);
      const long machine = machine_nodes(s, file_platform, n);
      sizes.largest_nodes = std::max(sizes.largest_nodes, machine);
      // Spread placement and LLM stages on chosen GPU types build the whole machine.
      const bool whole = s.placement != Placement::kPacked || (s.llm && !s.llm->stage_gpus.empty());
      if (whole && machine > platforms::kMaxBuiltNodes) {
        KeyLocation cause = s.placement != Placement::kPacked ? s.placement_at : s.cluster_nodes_at;
        if (cause.file.empty()) cause = key;  // not written: the point's node count
        fail_at(cause, fmt::format("this point builds the whole machine of {} nodes (its nodes are "
                                   "spread over it), more than the {} scalecast builds for one "
                                   "simulation; use placement: packed or a smaller cluster.nodes",
                                   common::format_count(machine),
                                   common::format_count(platforms::kMaxBuiltNodes)));
      }
    } catch (const std::invalid_argument& e) {
      // An explicit machine size that holds the point is what the topology rule rejects.
      const bool machine_key = s.cluster_nodes > 0 && n <= s.cluster_nodes;
      fail_at(machine_key ? s.cluster_nodes_at : key, e.what());
    }
  }
  return sizes;
}

}  // namespace scalecast::sim
