#pragma once
// A whole machine as data: node types, partitions (a machine may mix node types), the
// inter-node network (fat tree, rail-optimized leaf/spine, dragonfly, dragonfly+), storage
// (parallel file system, node-local NVMe in the node type) and the network-model factors.
// Loaded from platforms/NAME.yaml by load_platform(); the schema is in platforms/README.md and
// printed by `scalecast describe platform --schema`. No SimGrid here: sim/ builds the model.

#include <limits>
#include <string>
#include <vector>

#include "platforms/gpu_spec.hpp"
#include "platforms/node_type.hpp"

namespace scalecast::platforms {

enum class Topology { kFatTree, kRailOptimized, kDragonfly, kDragonflyPlus };

std::string to_string(Topology t);

// One level of a fat tree, counted from the leaves (level 1 = switches the NICs plug into).
struct TreeLevel {
  int radix = 1;                  // children per switch (NIC ports at level 1)
  double oversubscription = 1.0;  // down:up bandwidth ratio of each switch's uplink
  double latency_s = 0.0;         // latency of the uplink to the next level
};

struct Network {
  Topology topology = Topology::kFatTree;
  double port_bandwidth_Bps = 0.0;  // switch port rate per direction (uplink capacity basis)
  bool sharp = false;  // switches reduce in the network (SHARP): NCCL's CollNet algorithms apply
  // fat_tree (a single switch is a fat tree with one level)
  std::vector<TreeLevel> levels;
  // rail_optimized: leaf (scalable unit, rail) for every NIC of a scalable unit's nodes
  int su_nodes = 1;
  double leaf_oversubscription = 1.0;
  double leaf_uplink_latency_s = 0.0;
  // dragonfly / dragonfly_plus
  int routers_per_group = 1;          // dragonfly: routers; dragonfly+: leaf switches per group
  int ports_per_router = 1;           // NIC ports per router (dragonfly) / per leaf (dragonfly+)
  double local_bandwidth_Bps = 0.0;   // dragonfly: router-router link in a group
  double local_latency_s = 0.0;       // dragonfly: router-router; dragonfly+: leaf uplink
  double global_bandwidth_Bps = 0.0;  // one global link
  double global_latency_s = 0.0;
  int global_links_per_pair = 1;  // global links between every pair of groups
};

// A latency/bandwidth factor applied to communications whose bottleneck link has class
// `link_class` ("*" = any) and whose size is in [min_size_bytes, max_size_bytes).
struct FactorRule {
  std::string link_class = "*";
  double min_size_bytes = 0.0;
  double max_size_bytes = std::numeric_limits<double>::infinity();
  double latency_factor = 1.0;
  double bandwidth_factor = 1.0;
};

struct NetworkModelSpec {
  std::vector<FactorRule> factors;  // first match wins; no match = 1.0
};

struct PfsSpec {
  bool present = false;
  std::string name;
  int servers = 1;                        // real server count (documentation and metadata scaling)
  int simulated_servers = 1;              // storage-server hosts actually built (aggregated)
  double read_bandwidth_Bps = 0.0;        // aggregate, whole file system
  double write_bandwidth_Bps = 0.0;       // aggregate, whole file system
  double per_server_bandwidth_Bps = 0.0;  // one simulated server's NIC (default aggregate/sim)
  double per_client_bandwidth_Bps = 0.0;  // 0 = limited only by the node's NICs
  double metadata_ops_per_s = 0.0;        // 0 = unknown
  double latency_s = 0.0;                 // server link latency
  double capacity_bytes = 0.0;
};

struct Partition {
  std::string name;
  int node_type = 0;  // index into Platform::node_types
  int nodes = 0;
};

struct Platform {
  std::string name;
  std::string description;
  std::string file;  // where it was loaded from
  std::vector<NodeType> node_types;
  std::vector<Partition> partitions;
  Network network;
  NetworkModelSpec network_model;
  PfsSpec pfs;

  int total_nodes() const;
  int max_nics_per_node() const;
  // Index of a partition by name; -1 when absent.
  int find_partition(const std::string& name) const;
};

// Loads a platform by bare name (platforms/NAME.yaml in the data directory, see data_dir.hpp)
// or by path (anything containing '/' or ending in .yaml). Throws common::ConfigError.
Platform load_platform(const std::string& name_or_path);
// Parses platform YAML text; `display_name` stands for the file in errors and `base_dir` is
// where a relative gpu_catalog path is looked up.
Platform parse_platform(const std::string& text, const std::string& display_name,
                        const std::string& base_dir);

}  // namespace scalecast::platforms
