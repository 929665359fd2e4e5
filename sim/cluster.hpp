#pragma once
// The machine a scenario's point runs on (scenarios/README.md, `cluster`): the platform file
// resized to `cluster.nodes` nodes, or, with `cluster.nodes: fit` (the default), the file's size
// grown to the point's node count when the point needs more. The growing partition is
// `cluster.partition` (default: the largest). The network follows the file's topology rule
// (platforms/cluster_size.hpp).

#include <optional>
#include <vector>

#include "platforms/platform.hpp"
#include "sim/scenario.hpp"

namespace scalecast::sim {

// Size in nodes of the machine for a point of `nodes` nodes of scenario `s` on `file_platform`.
long machine_nodes(const Scenario& s, const platforms::Platform& file_platform, int nodes);

// `file_platform` resized for a point of `nodes` nodes. Throws std::invalid_argument when the
// topology rule cannot build it, the growing partition is unknown, or the point needs more
// nodes than `cluster.nodes` gives.
platforms::Platform sized_platform(const Scenario& s, const platforms::Platform& file_platform,
                                   int nodes);
// The same, or nothing where the node count is one the machine cannot have.
std::optional<platforms::Platform> sized_platform_if_any(const Scenario& s,
                                                         const platforms::Platform& file_platform,
                                                         int nodes);

// The parent's check before any child starts: every count of `nodes` must be buildable. Throws
// common::ConfigError at the key that decides (the node count's entry in `nodes`, or `at` when
// given, e.g. a --nodes option; cluster.nodes; cluster.partition). Loads the platform (its own
// ConfigErrors pass through).
// Returns the largest machine the points run on and the file's size, for a notice when it grows.
struct MachineSizes {
  long file_nodes = 0;
  long largest_nodes = 0;
  // GPUs per node a point uses: the scenario's gpus_per_node, else the GPU count of the node type
  // of the partition that grows (cluster.partition, else the largest).
  int gpus_per_node = 0;
};
MachineSizes check_node_counts(const Scenario& s, const std::vector<int>& nodes,
                               const std::optional<KeyLocation>& at = std::nullopt);

}  // namespace scalecast::sim
