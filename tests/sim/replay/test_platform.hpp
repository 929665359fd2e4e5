#pragma once
// A small SimGrid platform built directly in the tests, with known links: per node one CPU host
// and `gpus` GPU hosts; every GPU has a private split-duplex "nvlink" link (intra-node routes
// cross the two GPUs' links), every node a split-duplex "nic" link; an inter-node route is
// gpu-link, nic, [backbone], nic, gpu-link. `backbone(a, b)` picks which shared backbone link
// (index) the route between nodes a and b crosses, or -1 for none. All pairs get explicit
// routes in one full zone, fine for the few dozen hosts of a test. Optional storage: an NVMe
// disk per node, and PFS servers with disks behind an aggregate link.

#include <functional>
#include <vector>

#include "sim/simulated_platform.hpp"

namespace simgrid::s4u {
class Disk;
class Link;
}  // namespace simgrid::s4u

namespace scalecast::sim::testing {

struct TestPlatformSpec {
  int nodes = 2;
  int gpus = 1;
  double gpu_link_bw = 50e9, gpu_link_lat_s = 0.5e-6;  // each of the two GPU links of a route
  double nic_bw = 12.5e9, nic_lat_s = 0.5e-6;
  int backbones = 0;
  double backbone_bw = 12.5e9, backbone_lat_s = 0.0;
  std::function<int(int, int)> backbone;   // node pair -> backbone index or -1
  double h2d_bw = 16e9, h2d_lat_s = 1e-6;  // CPU -> GPU link
  double nvme_read_bw = 0.0;               // > 0: an NVMe disk per node on its CPU host
  // > 0 servers: a parallel file system; route server -> CPU = server link, the shared
  // aggregate link, the node's NIC (down); each server's disk reads at pfs_disk_bw.
  int pfs_servers = 0;
  double pfs_disk_bw = 1e9, pfs_link_bw = 1e12, pfs_aggregate_bw = 1e12;
  // Routes between a node's CPU and other nodes' CPUs and GPUs, through both NICs (parameter
  // servers and MPI on the CPU); off: only GPU-GPU and CPU to its own GPUs.
  bool host_routes = false;
};

class TestPlatform : public SimulatedPlatform {
 public:
  explicit TestPlatform(const TestPlatformSpec& spec);
  int node_count() const override { return spec_.nodes; }
  int gpus_per_node(int) const override { return spec_.gpus; }
  simgrid::s4u::Host* gpu(int node, int local) const override {
    return gpus_[node * spec_.gpus + local];
  }
  simgrid::s4u::Host* cpu(int node, int) const override { return cpus_[node]; }
  int socket_of_gpu(int, int) const override { return 0; }
  simgrid::s4u::Disk* nvme(int node) const override {
    return nvme_.empty() ? nullptr : nvme_[node];
  }
  std::vector<simgrid::s4u::Host*> pfs_servers() const override { return servers_; }
  std::string gpu_type(int) const override { return "test-gpu"; }

 private:
  TestPlatformSpec spec_;
  std::vector<simgrid::s4u::Host*> gpus_, cpus_, servers_;
  std::vector<simgrid::s4u::Disk*> nvme_;
};

// `nodes` x `gpus` with every link's latency zero, for closed-form times.
inline TestPlatformSpec no_latency(int nodes, int gpus) {
  TestPlatformSpec ps;
  ps.nodes = nodes;
  ps.gpus = gpus;
  ps.gpu_link_lat_s = 0.0;
  ps.nic_lat_s = 0.0;
  ps.h2d_lat_s = 0.0;
  return ps;
}

}  // namespace scalecast::sim::testing
