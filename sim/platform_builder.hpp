#pragma once
// Builds the SimGrid model of a machine description: one MachineZone (the root netzone) with a
// host per GPU and per CPU socket, a link pair per NVLink/PCIe/X-Bus/NIC/switch uplink, a disk
// per node-local NVMe and storage-server hosts for the parallel file system. The returned
// MachinePlatform answers the engine's questions (SimulatedPlatform) and a few more.

#include <memory>
#include <string>
#include <vector>

#include "platforms/platform.hpp"
#include "sim/simulated_platform.hpp"

namespace scalecast::sim {

class MachinePlatform final : public SimulatedPlatform {
 public:
  int node_count() const override { return static_cast<int>(nodes_.size()); }
  int gpus_per_node(int node) const override;
  simgrid::s4u::Host* gpu(int node, int local_gpu) const override;
  simgrid::s4u::Host* cpu(int node, int socket) const override;
  int socket_of_gpu(int node, int local_gpu) const override;
  simgrid::s4u::Disk* nvme(int node) const override;
  std::vector<simgrid::s4u::Host*> pfs_servers() const override { return pfs_servers_; }
  std::string gpu_type(int node) const override;
  double gpu_link_unit_Bps(int node) const override;

  // Beyond the contract.
  const platforms::Platform& description() const { return *platform_; }
  const platforms::NodeType& node_type(int node) const;
  int sockets(int node) const { return node_type(node).cpu.sockets; }
  int nic_of_gpu(int node, int local_gpu) const;
  const std::string& partition_of(int node) const;
  simgrid::s4u::Disk* pfs_disk(int server) const { return pfs_disks_.at(server); }
  NetworkMode network_mode() const { return mode_; }

 private:
  friend std::unique_ptr<MachinePlatform> build_platform(simgrid::s4u::Engine&,
                                                         const platforms::Platform&,
                                                         const BuildOptions&);
  struct NodeInfo {
    int type;
    int partition;
    int first_gpu;  // index into gpus_
    int first_cpu;  // index into cpus_
    simgrid::s4u::Disk* nvme;
  };
  void check_node(int node) const;

  std::shared_ptr<const platforms::Platform> platform_;
  NetworkMode mode_ = NetworkMode::kIdeal;
  std::vector<NodeInfo> nodes_;
  std::vector<simgrid::s4u::Host*> gpus_;
  std::vector<simgrid::s4u::Host*> cpus_;
  std::vector<simgrid::s4u::Host*> pfs_servers_;
  std::vector<simgrid::s4u::Disk*> pfs_disks_;
};

// Builds `options.nodes` nodes (0 = all) of the machine, or of `options.partition`, in a fresh
// engine (one without a platform yet) and configures the network model (options.network).
// Throws std::invalid_argument for a bad node count or partition, std::logic_error when the
// engine already has a platform.
std::unique_ptr<MachinePlatform> build_platform(simgrid::s4u::Engine& engine,
                                                const platforms::Platform& platform,
                                                const BuildOptions& options);

}  // namespace scalecast::sim
