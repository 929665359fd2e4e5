#pragma once
// A node type: CPU sockets, GPUs, internal switches (PCIe, NVSwitch), NIC rails and the links
// between them, as a small graph. Vertices are numbered cpus, gpus, PCIe switches, NVSwitches,
// NICs (in that order) and named "cpu0", "gpu3", "pcie1", "nvs0", "nic2" in platform files.
// Every link is full duplex with the same bandwidth each way; a machine reuses a node type for
// any number of nodes, so per-type facts (routes, rails) are computed once.

#include <string>
#include <vector>

#include "platforms/gpu_spec.hpp"

namespace scalecast::platforms {

enum class VertexKind { kCpu, kGpu, kPcieSwitch, kNvSwitch, kNic };

// One full-duplex intra-node link between vertices a and b.
struct LinkSpec {
  std::string link_class;      // technology, also the SimGrid link-name prefix: "nvlink", "xbus"...
  int a = 0;                   // vertex index (NodeType numbering)
  int b = 0;                   // vertex index
  double bandwidth_Bps = 0.0;  // bytes/s per direction (already multiplied by `count`)
  double latency_s = 0.0;
};

struct CpuSpec {
  std::string model;                // e.g. "POWER9"
  int sockets = 1;                  // CPU sockets (one SimGrid host each)
  int cores_per_socket = 1;         // usable cores
  double core_flops = 1e9;          // FLOP/s of one core (SimGrid host core speed)
  double memory_bandwidth_Bps = 0;  // per socket, bytes/s (0 = unknown)
  double memory_bytes = 0;          // per node
};

struct NicSpec {
  int count = 0;               // NIC rails per node
  std::string technology;      // "edr", "hdr200", "ndr400", "slingshot11", "25gbe"...
  double bandwidth_Bps = 0.0;  // line rate per rail per direction
  double latency_s = 0.0;      // NIC-to-leaf link latency
  // The NICs carry RDMA (InfiniBand verbs, RoCE, the fabric's own provider): GPU collectives
  // run over it. false: TCP/IP only, so NCCL uses its socket transport (sim/transport.hpp).
  bool rdma = true;
};

// Ethernet NIC technologies ("ethernet", "25gbe", "100gbe", "roce"...): a platform must say
// whether they carry RDMA (`nics.rdma`), as many such NICs do not.
bool nic_is_ethernet(const std::string& technology);
// Technologies that carry TCP/IP: Ethernet, and InfiniBand as IPoIB ("edr", "fdr", "qdr",
// "hdr...", "ndr...", "xdr..."). Slingshot and NVLink here do not.
bool nic_carries_tcp(const std::string& technology);

struct NvmeSpec {
  bool present = false;
  double read_Bps = 0.0;
  double write_Bps = 0.0;
  double capacity_bytes = 0.0;
};

struct NodeType {
  std::string name;
  CpuSpec cpu;
  int gpu_count = 0;
  GpuSpec gpu;  // from the catalog (gpu.name is the catalog key)
  int pcie_switches = 0;
  int nvswitches = 0;
  NicSpec nic;
  NvmeSpec nvme;
  std::vector<LinkSpec> links;

  // Resolved by the loader (explicit in the file or nearest by hop count).
  std::vector<int> socket_of_gpu;  // per local GPU
  std::vector<int> nic_of_gpu;     // per local GPU, -1 when the node has no NIC
  std::vector<int> nic_of_socket;  // per socket, -1 when the node has no NIC

  int vertex_count() const;
  int vertex(VertexKind kind, int index) const;  // vertex number of e.g. (kGpu, 3)
  VertexKind kind_of(int vertex) const;
  int index_of(int vertex) const;  // index within its kind
  std::string vertex_name(int vertex) const;
  // Parses "cpu0", "gpu3", ...; returns -1 when the name is malformed or out of range.
  int parse_vertex(const std::string& name) const;
};

// Shortest routes inside one node type: hop count first, then the widest bottleneck, then the
// lowest link index. GPUs and NICs are endpoints only (no transit), as on real hardware where a
// copy between two GPUs without NVLink goes over PCIe and the CPUs, not through a third GPU.
struct NodeRoutes {
  struct Hop {
    int link = 0;          // index into NodeType::links
    bool reverse = false;  // false: a->b direction, true: b->a
  };
  int vertices = 0;
  std::vector<std::vector<Hop>> routes;  // [src * vertices + dst]
  std::vector<int> hops;                 // -1 when unreachable

  const std::vector<Hop>& route(int src, int dst) const { return routes[src * vertices + dst]; }
  int distance(int src, int dst) const { return hops[src * vertices + dst]; }
};

NodeRoutes compute_node_routes(const NodeType& type);

}  // namespace scalecast::platforms
