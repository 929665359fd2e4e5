#include "calibration/collective_algorithms.hpp"

#include <algorithm>

// Every number in this file is from NCCL v2.21.5-1, src/graph/tuning.cc (ncclTopoTuneModel,
// ncclTopoGetAlgoTime) unless its comment says otherwise; read there, re-expressed here for an
// all-reduce only. Latencies in microseconds, bandwidths in GB/s, as in NCCL.

namespace scalecast::calibration {
namespace {

constexpr int kNvlinkHw = 0, kPciHw = 1, kNetHw = 2;

// baseLat[algorithm][protocol]: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree.
constexpr double kBaseLat[kNcclAlgoCount][kNcclProtoCount] = {
    {6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};

// hwLat[NVLink, PCI, network][algorithm][protocol].
constexpr double kHwLat[3][kNcclAlgoCount][kNcclProtoCount] = {
    {{.6, 1.25, 28}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}},
    {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}}};

// [Volta, Ampere, Hopper or Intel, AMD][1 node, 2 nodes, more].
constexpr double kLlMaxBw[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}};
constexpr double kPerChMaxRingLL128Bw[3][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}};
constexpr double kPerChMaxTreeLL128Bw[3][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};
constexpr double kPerChMaxTreeBw[3][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};

int idx(NcclAlgo a) { return static_cast<int>(a); }
int idx(NcclProto p) { return static_cast<int>(p); }
int cc_index(const NcclTopology& t) {
  return t.compute_capability >= 90 ? 2 : t.compute_capability >= 80 ? 1 : 0;
}
int nodes_index(const NcclTopology& t) { return t.nodes <= 2 ? t.nodes - 1 : 2; }
// LL caps: for a single node by GPU generation, for several by CPU vendor.
double ll_max_bw(const NcclTopology& t) {
  return kLlMaxBw[t.nodes == 1 ? cc_index(t) : (t.amd_cpu ? 1 : 0)][nodes_index(t)];
}
int log2i(long n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}
int intra_hw(const NcclTopology& t) { return t.nvlink ? kNvlinkHw : kPciHw; }
double hw_lat(const NcclTopology& t, int hw, NcclAlgo a, NcclProto p) {
  // "De-penalize Tree/Simple latency on Power systems to favor Tree than Ring".
  if (t.power_cpu && hw == kPciHw && a == NcclAlgo::kTree && p == NcclProto::kSimple)
    return kHwLat[kPciHw][idx(NcclAlgo::kRing)][idx(p)];
  return kHwLat[hw][idx(a)][idx(p)];
}
double intra_lat(const NcclTopology& t, NcclAlgo a, NcclProto p) {
  return hw_lat(t, intra_hw(t), a, p);
}
// interLat = hwLat[NET] + graph latencyInter (0 for IB: it is set only for some network plugins),
// plus the flush latency for Simple (again latencyInter, 0).
double inter_lat(const NcclTopology& t, NcclAlgo a, NcclProto p) { return hw_lat(t, kNetHw, a, p); }
// The graph's total bandwidth (nChannels x per-channel bw): a single node is bound by a GPU's
// NVLink/PCIe; several nodes by the narrower of that and the node's NICs (each channel crosses
// the node boundary once, through its own NIC).
double graph_bw(const NcclTopology& t) {
  return t.nodes == 1 ? t.intra_bw_GBps : std::min(t.intra_bw_GBps, t.inter_bw_GBps);
}
bool simple_only(NcclProto p) { return p == NcclProto::kSimple; }

// The ring's bus bandwidth for protocol p (the same refinements for every ring collective).
double ring_bus_bw(const NcclTopology& t, NcclProto p) {
  double bus = graph_bw(t);
  const double ppn = static_cast<double>(t.ranks) / t.nodes;
  if (p == NcclProto::kLL) bus = std::min(ll_max_bw(t), bus * .5);
  if (p == NcclProto::kLL128)
    bus = std::min(bus * (ppn < 2 ? 0.7 : 0.92),
                   t.channels * kPerChMaxRingLL128Bw[cc_index(t)][nodes_index(t)]);
  return bus;
}

// The ring's latency over `steps` steps of which `n_inter` cross nodes.
double ring_latency_us(const NcclTopology& t, NcclProto p, int steps, int n_inter) {
  double intra = intra_lat(t, NcclAlgo::kRing, p);
  if (t.nodes > 1) {
    // Inter-node rings still launch nsteps network posts (1 us Intel/other, 2 us AMD; x3 for
    // Simple).
    double overhead = t.amd_cpu ? 2.0 : 1.0;
    if (p == NcclProto::kSimple) overhead *= 3;
    intra = std::max(intra, overhead);
  }
  return kBaseLat[idx(NcclAlgo::kRing)][idx(p)] + (steps - n_inter) * intra +
         n_inter * inter_lat(t, NcclAlgo::kRing, p);
}

class Ring final : public NcclAlgorithm {
 public:
  NcclAlgo id() const override { return NcclAlgo::kRing; }
  bool enabled(const NcclTopology& t) const override { return t.ranks > 1; }
  int steps(const NcclTopology& t) const override { return 2 * (t.ranks - 1); }
  double bandwidth_GBps(const NcclTopology& t, NcclProto p) const override {
    return ring_bus_bw(t, p) * t.ranks / steps(t);  // bus bandwidth to algorithm bandwidth
  }
  double latency_us(const NcclTopology& t, NcclProto p) const override {
    return ring_latency_us(t, p, steps(t), t.nodes > 1 ? 2 * t.nodes : 0);
  }
};

class Tree final : public NcclAlgorithm {
 public:
  NcclAlgo id() const override { return NcclAlgo::kTree; }
  bool enabled(const NcclTopology& t) const override { return t.ranks > 1; }
  int steps(const NcclTopology& t) const override {
    return 2 * (t.gpus_per_node() - 1 + log2i(t.nodes));
  }
  double bandwidth_GBps(const NcclTopology& t, NcclProto p) const override {
    const int c = cc_index(t), n = nodes_index(t);
    double bus = std::min(graph_bw(t) * .92, t.channels * kPerChMaxTreeBw[c][n]);
    if (p == NcclProto::kLL) bus = std::min(bus * 1.0 / 3.8, ll_max_bw(t));
    if (p == NcclProto::kLL128)
      bus = std::min(bus * (t.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                     t.channels * kPerChMaxTreeLL128Bw[c][n]);
    return bus * .5;
  }
  double latency_us(const NcclTopology& t, NcclProto p) const override {
    return kBaseLat[idx(id())][idx(p)] + 2 * ((t.gpus_per_node() - 1) * intra_lat(t, id(), p) +
                                              log2i(t.nodes) * inter_lat(t, id(), p));
  }
};

class CollNetDirect final : public NcclAlgorithm {
 public:
  NcclAlgo id() const override { return NcclAlgo::kCollNetDirect; }
  // CollNet needs the fabric's reduction (collNetSupport) and, for Direct, NVSwitches.
  bool enabled(const NcclTopology& t) const override {
    return t.collnet && t.nvswitch && t.nodes > 1;
  }
  bool supports(NcclProto p, const NcclTopology&) const override { return simple_only(p); }
  int steps(const NcclTopology&) const override { return 3; }
  double bandwidth_GBps(const NcclTopology& t, NcclProto) const override {
    const double ppn = static_cast<double>(t.ranks) / t.nodes;
    double bus = graph_bw(t);
    // "Collnet+Direct requires all GPUs to have a local NIC to work at full speed".
    double factor = ppn / t.channels;
    factor -= (factor - 1) / 2;
    bus /= factor;
    if (t.compute_capability >= 90) bus *= .85;
    return bus * .5;
  }
  double latency_us(const NcclTopology& t, NcclProto p) const override {
    const int ppn1 = t.gpus_per_node() - 1;
    // 0.4 us "arity serialization latency" per local peer.
    return kBaseLat[idx(id())][idx(p)] +
           2 * (std::min(1, ppn1) * intra_lat(t, id(), p) + ppn1 * 0.4) + inter_lat(t, id(), p);
  }
};

class CollNetChain final : public NcclAlgorithm {
 public:
  NcclAlgo id() const override { return NcclAlgo::kCollNetChain; }
  bool enabled(const NcclTopology& t) const override { return t.collnet && t.nodes > 1; }
  bool supports(NcclProto p, const NcclTopology&) const override { return simple_only(p); }
  int steps(const NcclTopology& t) const override { return 2 * (t.gpus_per_node() - 1) + 1; }
  double bandwidth_GBps(const NcclTopology& t, NcclProto) const override {
    return graph_bw(t) * .5;
  }
  double latency_us(const NcclTopology& t, NcclProto p) const override {
    return kBaseLat[idx(id())][idx(p)] + 2 * (t.gpus_per_node() - 1) * intra_lat(t, id(), p) +
           inter_lat(t, id(), p);
  }
};

class Nvls final : public NcclAlgorithm {
 public:
  NcclAlgo id() const override { return NcclAlgo::kNvls; }
  // Multi-node NVLS needs CollNet ("if (nNodes > 1) algoEnable[NCCL_ALGO_NVLS] = 0" without it).
  bool enabled(const NcclTopology& t) const override {
    return t.nvls && (t.nodes == 1 || t.collnet);
  }
  bool supports(NcclProto p, const NcclTopology&) const override { return simple_only(p); }
  int steps(const NcclTopology& t) const override { return t.nodes > 1 ? 2 : 1; }
  double bandwidth_GBps(const NcclTopology& t, NcclProto) const override {
    return graph_bw(t) * 5.0 / 6.0;
  }
  double latency_us(const NcclTopology& t, NcclProto p) const override {
    // NVLS replaces the base latency: latencies = intraLat (+ interLat across nodes).
    return intra_lat(t, id(), p) + (t.nodes > 1 ? inter_lat(t, id(), p) : 0.0);
  }
};

class NvlsTree final : public NcclAlgorithm {
 public:
  NcclAlgo id() const override { return NcclAlgo::kNvlsTree; }
  bool enabled(const NcclTopology& t) const override { return t.nvls && t.nodes > 1; }
  bool supports(NcclProto p, const NcclTopology&) const override { return simple_only(p); }
  int steps(const NcclTopology& t) const override { return 1 + 2 * log2i(t.nodes); }
  double bandwidth_GBps(const NcclTopology& t, NcclProto) const override {
    const double inter = t.nodes <= 2 ? t.inter_bw_GBps : t.inter_bw_GBps / 2;
    return std::min(t.intra_bw_GBps, inter) * 5.0 / 6.0;
  }
  double latency_us(const NcclTopology& t, NcclProto p) const override {
    return kBaseLat[idx(id())][idx(p)] + intra_lat(t, id(), p) +
           2 * log2i(t.nodes) * inter_lat(t, id(), p);
  }
};

}  // namespace

std::string_view to_string(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::kTree:
      return "tree";
    case NcclAlgo::kRing:
      return "ring";
    case NcclAlgo::kCollNetDirect:
      return "collnet_direct";
    case NcclAlgo::kCollNetChain:
      return "collnet_chain";
    case NcclAlgo::kNvls:
      return "nvls";
    case NcclAlgo::kNvlsTree:
      return "nvls_tree";
  }
  return "?";
}

std::string_view to_string(NcclProto p) {
  switch (p) {
    case NcclProto::kLL:
      return "ll";
    case NcclProto::kLL128:
      return "ll128";
    case NcclProto::kSimple:
      return "simple";
  }
  return "?";
}

bool NcclAlgorithm::supports(NcclProto p, const NcclTopology& t) const {
  if (p != NcclProto::kLL128) return true;
  // LL128 is on by default only with NVLink inside the node, a NIC on the GPU's PCIe switch
  // across nodes (nvlink/collnet flags carry that) and Volta, Ampere or Hopper.
  return t.nvlink && (t.nodes == 1 || t.nic_near_gpu) &&
         (t.compute_capability == 70 || t.compute_capability == 80 || t.compute_capability == 90);
}

std::vector<std::unique_ptr<NcclAlgorithm>> make_nccl_algorithms() {
  std::vector<std::unique_ptr<NcclAlgorithm>> v;
  v.push_back(std::make_unique<Tree>());
  v.push_back(std::make_unique<Ring>());
  v.push_back(std::make_unique<CollNetDirect>());
  v.push_back(std::make_unique<CollNetChain>());
  v.push_back(std::make_unique<Nvls>());
  v.push_back(std::make_unique<NvlsTree>());
  return v;
}

NcclRingChoice nccl_ring_choice(const NcclTopology& t, NcclRingCollective c, double bytes) {
  NcclRingChoice best;
  if (t.ranks < 2 || !(bytes > 0.0)) return best;
  // tuning.cc: a reduce-scatter or all-gather has nRanks - 1 steps, nNodes - 1 of them between
  // nodes; an all-reduce 2(nRanks - 1), 2 nNodes.
  const bool all_reduce = c == NcclRingCollective::kAllReduce;
  const int steps = all_reduce ? 2 * (t.ranks - 1) : t.ranks - 1;
  const int n_inter = t.nodes > 1 ? (all_reduce ? 2 * t.nodes : t.nodes - 1) : 0;
  const Ring ring;
  for (const NcclProto p : {NcclProto::kLL, NcclProto::kLL128, NcclProto::kSimple}) {
    if (!ring.supports(p, t)) continue;
    const double bw = ring_bus_bw(t, p) * t.ranks / steps;
    if (!(bw > 0.0)) continue;
    double latency = ring_latency_us(t, p, steps, n_inter);
    if (all_reduce) latency *= nccl_ring_plateau(t, p, bytes);
    const double time = latency * 1e-6 + bytes / (bw * 1e9);
    if (best.time_s > 0.0 && time >= best.time_s) continue;
    best = {p, latency * 1e-6, protocol_efficiency(p), time};
  }
  return best;
}

double nccl_ring_plateau(const NcclTopology& t, NcclProto p, double bytes) {
  if (p != NcclProto::kSimple || t.nodes <= 1 ||
      bytes / (static_cast<double>(t.channels) * t.ranks) < 64)
    return 1.0;
  return t.compute_capability < 80 ? 1.9 : 1.4;
}

double nccl_base_latency_us(NcclAlgo a, NcclProto p) { return kBaseLat[idx(a)][idx(p)]; }
double nccl_hw_latency_us(int hw, NcclAlgo a, NcclProto p) { return kHwLat[hw][idx(a)][idx(p)]; }

double protocol_efficiency(NcclProto p) {
  switch (p) {
    case NcclProto::kLL:
      return 0.5;  // union ncclLLFifoLine: 8 data bytes and 8 flag bytes per 16-byte line
    case NcclProto::kLL128:
      return 120.0 / 128.0;  // NCCL_LL128_DATAELEMS = 15 of 16 64-bit words per 128-byte line
    case NcclProto::kSimple:
      return 1.0;
  }
  return 1.0;
}

}  // namespace scalecast::calibration
