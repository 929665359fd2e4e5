#pragma once
// NCCL's all-reduce algorithms as its tuner sees them: each predicts, for a protocol (LL, LL128,
// Simple), the bus bandwidth and the fixed latency of one call on a given communicator
// topology, from the tables and formulas of NCCL's src/graph/tuning.cc (ncclTopoTuneModel and
// ncclTopoGetAlgoTime, NCCL v2.21.5-1, github.com/NVIDIA/nccl). One class per algorithm, so a
// new algorithm is a new class, not a new branch in a switch. SimGrid-free.

#include <memory>
#include <string_view>
#include <vector>

namespace scalecast::calibration {

enum class NcclAlgo { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree };
enum class NcclProto { kLL, kLL128, kSimple };
inline constexpr int kNcclAlgoCount = 6;
inline constexpr int kNcclProtoCount = 3;

std::string_view to_string(NcclAlgo a);   // "tree", "ring", "collnet_direct", ...
std::string_view to_string(NcclProto p);  // "ll", "ll128", "simple"

// What NCCL's topology detection and graph search hand the tuner, derived from a platform by
// nccl_topology() (collective_model.hpp). Bandwidths in GB/s (1e9 B/s) as in NCCL's tables.
struct NcclTopology {
  int ranks = 1;
  int nodes = 1;
  int compute_capability = 70;  // 70 Volta, 80 Ampere, 90 Hopper (NCCL's minCompCap)
  bool nvlink = false;          // GPUs of a node are connected by NVLink (typeIntra LINK_NVL)
  bool nvswitch = false;        // the node has NVSwitches (CollNet Direct needs them)
  bool nvls = false;            // NVLink SHARP multicast (Hopper + NVSwitch + more than 2 GPUs)
  // NCCL may run CollNet: the fabric offers in-network reduction (SHARP, CollNet plugin) and the
  // job enables it (NCCL_COLLNET_ENABLE=1; nccl_topology())
  bool collnet = false;
  bool power_cpu = false;      // POWER host: NCCL de-penalises Tree/Simple over PCI
  bool amd_cpu = false;        // AMD host: larger network post overhead, other LL caps
  bool nic_near_gpu = false;   // a NIC on the GPU's PCIe switch (PXB), or via NVLink (PXN, Hopper)
  double intra_bw_GBps = 0.0;  // one GPU's NVLink (or PCIe) bandwidth per direction
  double inter_bw_GBps = 0.0;  // one node's NICs together, per direction
  int channels = 1;            // nChannels of the ring/tree graphs after duplication
  int nvls_channels = 16;      // NCCL_NVLS_NCHANNELS default
  int gpus_per_node() const { return ranks / nodes; }
};

// One algorithm's tuning-model terms for an all-reduce.
class NcclAlgorithm {
 public:
  virtual ~NcclAlgorithm() = default;
  virtual NcclAlgo id() const = 0;
  // NCCL's default enables (algoEnable / protoEnable with LL128's platform rule, NVLS/CollNet
  // support) for this topology.
  virtual bool enabled(const NcclTopology& t) const = 0;
  virtual bool supports(NcclProto p, const NcclTopology& t) const;
  // Algorithm bandwidth (bytes of the buffer per second, GB/s) for an all-reduce; 0 = unusable.
  virtual double bandwidth_GBps(const NcclTopology& t, NcclProto p) const = 0;
  // Latency of one call, microseconds (baseLat + per-step hardware latencies).
  virtual double latency_us(const NcclTopology& t, NcclProto p) const = 0;
  // Sequential steps of the algorithm (for per-step figures in describe and the simulator).
  virtual int steps(const NcclTopology& t) const = 0;
};

// The six NCCL algorithms in NCCL's index order.
std::vector<std::unique_ptr<NcclAlgorithm>> make_nccl_algorithms();

// The ring collectives of an LLM step, as NCCL's tuner prices them.
enum class NcclRingCollective { kAllReduce, kReduceScatter, kAllGather };
struct NcclRingChoice {
  NcclProto proto = NcclProto::kSimple;
  double latency_s = 0.0;   // the call's fixed part
  double efficiency = 1.0;  // protocol_efficiency(proto): buffer bytes per byte on the wire
  double time_s = 0.0;      // latency_s + bytes / algorithm bandwidth; 0: no call (< 2 ranks)
};
// NCCL's ring for one call of `bytes` (an all-reduce's buffer, a reduce-scatter's input, an
// all-gather's output, as NCCL counts them) on topology `t`, with the protocol of least predicted
// time among those NCCL enables: tuning.cc's ring terms with its step counts, a reduce-scatter
// or all-gather nRanks - 1 steps of which nNodes - 1 between nodes, an all-reduce 2(nRanks - 1)
// and 2 nNodes (and ncclTopoGetAlgoTime's ring plateau for a Simple all-reduce across nodes).
NcclRingChoice nccl_ring_choice(const NcclTopology& t, NcclRingCollective c, double bytes);
// ncclTopoGetAlgoTime's "plateau effect of ring": the latency factor of a Simple ring all-reduce
// of `bytes` across nodes with at least 64 B per channel and rank (1.9 before Ampere, 1.4 from
// it); 1 otherwise.
double nccl_ring_plateau(const NcclTopology& t, NcclProto p, double bytes);

// NCCL's tables, exposed for tests and `describe`.
double nccl_base_latency_us(NcclAlgo a, NcclProto p);
// hw: 0 NVLink, 1 PCI, 2 network (NCCL_HW_NVLINK / _PCI / _NET).
double nccl_hw_latency_us(int hw, NcclAlgo a, NcclProto p);
// Fraction of the link bandwidth that carries data: LL 8 of every 16 bytes (a flag per 8 bytes),
// LL128 120 of 128, Simple all (NCCL's protocol definitions, src/include/device.h).
double protocol_efficiency(NcclProto p);

}  // namespace scalecast::calibration
