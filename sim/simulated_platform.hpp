#pragma once
// A machine description turned into SimGrid resources: one host per GPU and per CPU socket,
// links for every NVLink/PCIe/X-Bus/NIC/switch port, disks for node-local NVMe, storage-server
// hosts for the parallel file system, routed like the real topology (see platforms/README.md).
//
// Contract between the platform builder (sim/platform_builder.*) and the replay engine: the
// engine asks for hosts by (node, local GPU) and never needs to know how routes are computed.

#include <memory>
#include <string>
#include <vector>

namespace simgrid::s4u {
class Disk;
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace scalecast::platforms {
struct Platform;
}

namespace scalecast::sim {

// How the network model is configured (docs/simgrid-notes.md, "Network model").
enum class NetworkMode {
  kIdeal,      // CM02, no cross-traffic, no factors: one flow reaches link bandwidth exactly
  kCalibrated  // latency/bandwidth factors from the platform file installed via callbacks
};

struct BuildOptions {
  int nodes = 1;  // how many nodes of the machine to build (1..machine size)
  NetworkMode network = NetworkMode::kCalibrated;
  std::string partition;  // heterogeneous machines: which partition ("" = first/all)
};

class SimulatedPlatform {
 public:
  virtual ~SimulatedPlatform() = default;

  virtual int node_count() const = 0;
  virtual int gpus_per_node(int node) const = 0;
  virtual simgrid::s4u::Host* gpu(int node, int local_gpu) const = 0;
  virtual simgrid::s4u::Host* cpu(int node, int socket) const = 0;
  virtual int socket_of_gpu(int node, int local_gpu) const = 0;
  // Node-local NVMe of a node (nullptr when the node type has none).
  virtual simgrid::s4u::Disk* nvme(int node) const = 0;
  // Parallel file system server hosts (each with its disk); empty when there is none.
  virtual std::vector<simgrid::s4u::Host*> pfs_servers() const = 0;
  // The GPU catalog key of a node's GPUs (for the cost model).
  virtual std::string gpu_type(int node) const = 0;
  // One GPU-to-GPU link (an NVLink brick) of a node's GPUs, bytes/s per direction: the unit of
  // the direct links its intra-node rings are found on (sim/intra_rings.hpp); 0 when unknown.
  virtual double gpu_link_unit_Bps(int) const { return 0.0; }
};

}  // namespace scalecast::sim
