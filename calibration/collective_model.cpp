#include "calibration/collective_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace scalecast::calibration {
namespace {

constexpr double kGB = 1e9;

// NCCL v2.21.5-1 src/graph/tuning.cc: "Trees are not perfectly sticking to the model for
// medium sizes": bandwidth factor per protocol for log2(bytes / 64) < 23.
constexpr double kTreeCorrection[kNcclProtoCount][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

int log2i(long long n) {
  int l = 0;
  while (n >>= 1) ++l;
  return l;
}

int compute_capability(const platforms::GpuSpec& gpu) {
  const std::string& n = gpu.name;
  if (n.rfind("h100", 0) == 0 || n.rfind("h200", 0) == 0 || n.rfind("gh200", 0) == 0) return 90;
  if (n.rfind("a100", 0) == 0 || n.rfind("a30", 0) == 0) return 80;
  if (n.rfind("v100", 0) == 0) return 70;
  if (n.rfind("p100", 0) == 0) return 60;
  if (gpu.nvlink_generation == "nvlink4") return 90;
  if (gpu.nvlink_generation == "nvlink3") return 80;
  return 70;
}

bool contains(const std::string& s, std::string_view what) {
  return s.find(what) != std::string::npos;
}

}  // namespace

std::string_view to_string(CollectiveTier t) {
  return t == CollectiveTier::kMeasured ? "measured" : "datasheet";
}

std::optional<NcclAlgo> parse_nccl_algo(std::string_view text) {
  for (int a = 0; a < kNcclAlgoCount; ++a)
    if (text == to_string(static_cast<NcclAlgo>(a))) return static_cast<NcclAlgo>(a);
  return std::nullopt;
}

std::optional<NcclProto> parse_nccl_proto(std::string_view text) {
  for (int p = 0; p < kNcclProtoCount; ++p)
    if (text == to_string(static_cast<NcclProto>(p))) return static_cast<NcclProto>(p);
  return std::nullopt;
}

CollectiveModel::CollectiveModel(NcclTopology topology)
    : topology_(topology), algorithms_(make_nccl_algorithms()) {
  if (topology_.ranks < 1 || topology_.nodes < 1 || topology_.ranks % topology_.nodes != 0)
    throw std::invalid_argument(
        fmt::format("collective model: {} ranks on {} nodes", topology_.ranks, topology_.nodes));
  if (topology_.channels < 1) topology_.channels = 1;
}

std::string CollectiveModel::link_class() const {
  return topology_.nodes > 1 ? "inter_node" : "intra_node";
}

CollectiveChoice CollectiveModel::datasheet(NcclAlgo algo, NcclProto proto, double bytes) const {
  const NcclAlgorithm& a = *algorithms_[static_cast<int>(algo)];
  CollectiveChoice c;
  c.algo = algo;
  c.proto = proto;
  c.efficiency = protocol_efficiency(proto);
  double bw = a.bandwidth_GBps(topology_, proto);
  double lat = a.latency_us(topology_, proto);
  const long long b = static_cast<long long>(bytes);
  const int log_size = log2i(b >> 6);
  if (algo == NcclAlgo::kTree && log_size < 23)
    bw *= kTreeCorrection[static_cast<int>(proto)][log_size];
  if (algo == NcclAlgo::kRing) lat *= nccl_ring_plateau(topology_, proto, bytes);
  c.latency_s = lat * 1e-6;
  c.bandwidth_Bps = bw * kGB;
  c.time_s = bw > 0 ? c.latency_s + bytes / c.bandwidth_Bps : 0.0;
  return c;
}

const AlphaBetaFit* CollectiveModel::measured_fit(std::string_view algorithm) const {
  const auto it = measured_.find({std::string(algorithm), link_class(), topology_.ranks});
  return it == measured_.end() ? nullptr : &it->second;
}

std::vector<CollectiveChoice> CollectiveModel::candidates(double bytes) const {
  std::vector<CollectiveChoice> out;
  for (const auto& a : algorithms_) {
    if (!a->enabled(topology_)) continue;
    std::vector<CollectiveChoice> mine;
    for (int p = 0; p < kNcclProtoCount; ++p) {
      const auto proto = static_cast<NcclProto>(p);
      if (!a->supports(proto, topology_)) continue;
      CollectiveChoice c = datasheet(a->id(), proto, bytes);
      if (c.bandwidth_Bps > 0) mine.push_back(c);
    }
    if (mine.empty()) continue;
    if (const AlphaBetaFit* fit = measured_fit(to_string(a->id()))) {
      // A measured algorithm is one candidate: NCCL chose its protocol while it was timed; the
      // protocol reported is the datasheet's pick at this size.
      CollectiveChoice best =
          *std::min_element(mine.begin(), mine.end(),
                            [](const auto& x, const auto& y) { return x.time_s < y.time_s; });
      const double simple_bw = datasheet(a->id(), NcclProto::kSimple, bytes).bandwidth_Bps;
      best.tier = CollectiveTier::kMeasured;
      best.latency_s = fit->alpha_s;
      best.bandwidth_Bps = fit->beta_Bps;
      best.time_s = fit->time_s(bytes);
      best.efficiency = simple_bw > 0 ? fit->beta_Bps / simple_bw : 1.0;
      mine = {best};
    }
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

CollectiveChoice CollectiveModel::choose(double bytes, std::optional<NcclAlgo> algo,
                                         std::optional<NcclProto> proto) const {
  // One rank: nothing to reduce (NCCL's tuner returns before its tables), a zero-time copy.
  if (topology_.ranks == 1) return CollectiveChoice{};
  const CollectiveChoice* best = nullptr;
  const std::vector<CollectiveChoice> all = candidates(bytes);
  for (const CollectiveChoice& c : all) {
    if (algo && c.algo != *algo) continue;
    if (proto && c.proto != *proto && c.tier == CollectiveTier::kDatasheet) continue;
    if (!best || c.time_s < best->time_s) best = &c;
  }
  if (!best)
    throw std::invalid_argument(fmt::format(
        "all-reduce algorithm {} with protocol {} is not available on this machine ({} ranks on "
        "{} nodes, NVLS {}, CollNet/SHARP {})",
        algo ? to_string(*algo) : "auto", proto ? to_string(*proto) : "auto", topology_.ranks,
        topology_.nodes, topology_.nvls ? "yes" : "no", topology_.collnet ? "yes" : "no"));
  CollectiveChoice c = *best;
  // NCCL's own choice measured as such (algorithm "") stands for whatever it picks.
  if (const AlphaBetaFit* fit = measured_fit("");
      fit && !algo && c.tier != CollectiveTier::kMeasured) {
    const double simple_bw = datasheet(c.algo, NcclProto::kSimple, bytes).bandwidth_Bps;
    c.tier = CollectiveTier::kMeasured;
    c.latency_s = fit->alpha_s;
    c.bandwidth_Bps = fit->beta_Bps;
    c.time_s = fit->time_s(bytes);
    c.efficiency = simple_bw > 0 ? fit->beta_Bps / simple_bw : 1.0;
  }
  return c;
}

std::map<MeasuredCollectiveKey, AlphaBetaFit> fit_measured_all_reduces(const Database& db,
                                                                       const std::string& device) {
  std::map<MeasuredCollectiveKey, std::vector<std::pair<double, double>>> sweeps;
  for (const Measurement* m : db.measurements()) {
    const MeasurementKey& k = m->key;
    if (k.op != "collective" || k.pass != "all_reduce" || k.device != device) continue;
    const std::int64_t nodes = k.dims.count("nodes") ? k.dim("nodes") : 1;
    MeasuredCollectiveKey key{m->algorithm, nodes > 1 ? "inter_node" : "intra_node",
                              static_cast<int>(k.dim("ranks"))};
    sweeps[key].push_back({static_cast<double>(k.dim("bytes")), m->median_s});
  }
  std::map<MeasuredCollectiveKey, AlphaBetaFit> fits;
  for (auto& [key, pts] : sweeps) {
    std::sort(pts.begin(), pts.end());
    if (pts.size() < 3)
      continue;  // as the cost model's copy/collective lines (calibration/README.md)
    std::vector<double> sizes, times;
    for (const auto& [size, t] : pts) sizes.push_back(size), times.push_back(t);
    try {
      fits[key] = AlphaBetaFit::fit(sizes, times);
    } catch (const std::invalid_argument&) {
      // one distinct size: no line
    }
  }
  return fits;
}

int CollectiveModel::use_measurements(const Database& db, const std::string& device) {
  measured_ = fit_measured_all_reduces(db, device);
  int applicable = 0;
  for (const auto& [key, fit] : measured_)
    if (key.link_class == link_class() && key.ranks == topology_.ranks) ++applicable;
  return applicable;
}

NcclTopology nccl_topology(const platforms::Platform& platform, const platforms::NodeType& t,
                           int nodes, int gpus_per_node, bool collnet_enabled) {
  if (nodes < 1 || gpus_per_node < 1 || gpus_per_node > t.gpu_count)
    throw std::invalid_argument(fmt::format("collective model: {} nodes x {} GPUs on node type {}",
                                            nodes, gpus_per_node, t.name));
  NcclTopology n;
  n.nodes = nodes;
  n.ranks = nodes * gpus_per_node;
  n.compute_capability = compute_capability(t.gpu);
  n.nvswitch = t.nvswitches > 0;
  // NCCL sets collNetSupport only when the CollNet plugin works and NCCL_COLLNET_ENABLE is "1"
  // (NCCL v2.21.5-1 src/init.cc, initTransportsRank: "Determine local CollNet support"); the
  // variable is unset by default, so SHARP in the fabric alone changes nothing.
  n.collnet = platform.network.sharp && collnet_enabled;
  n.power_cpu = contains(t.cpu.model, "POWER");
  n.amd_cpu = contains(t.cpu.model, "EPYC") || contains(t.cpu.model, "AMD");
  const int gpu0 = t.vertex(platforms::VertexKind::kGpu, 0);
  double nvlink_bw = 0.0, pcie_bw = 0.0;
  for (const auto& l : t.links) {
    if (l.a != gpu0 && l.b != gpu0) continue;
    if (l.link_class == "nvlink" || l.link_class == "nvswitch") nvlink_bw += l.bandwidth_Bps;
    if (l.link_class == "pcie" && pcie_bw == 0.0) pcie_bw = l.bandwidth_Bps;
  }
  n.nvlink = nvlink_bw > 0.0;
  // NVLS: Hopper multicast through NVSwitch, more than two GPUs (src/transport/nvls.cc).
  n.nvls = n.compute_capability >= 90 && n.nvswitch && gpus_per_node > 2;
  n.intra_bw_GBps = (n.nvlink ? nvlink_bw : pcie_bw) / kGB;
  std::vector<int> nics;
  for (int g = 0; g < gpus_per_node && g < static_cast<int>(t.nic_of_gpu.size()); ++g)
    if (t.nic_of_gpu[g] >= 0 && std::find(nics.begin(), nics.end(), t.nic_of_gpu[g]) == nics.end())
      nics.push_back(t.nic_of_gpu[g]);
  n.inter_bw_GBps = static_cast<double>(nics.size()) * t.nic.bandwidth_Bps / kGB;
  if (gpus_per_node == 1 && nodes == 1) n.intra_bw_GBps = std::max(n.intra_bw_GBps, 1.0);
  if (gpus_per_node == 1) n.intra_bw_GBps = std::max(n.intra_bw_GBps, n.inter_bw_GBps);
  // GPUDirect RDMA at full speed: GPU 0's NIC behind PCIe switches only (NCCL's PATH_PXB), or on
  // Hopper with NVLink any GPU's such NIC reached through that GPU (PXN, PATH_PXN).
  const platforms::NodeRoutes routes = platforms::compute_node_routes(t);
  const auto pxb = [&](int g) {
    if (g >= static_cast<int>(t.nic_of_gpu.size()) || t.nic_of_gpu[g] < 0) return false;
    const int gpu = t.vertex(platforms::VertexKind::kGpu, g);
    const int nic = t.vertex(platforms::VertexKind::kNic, t.nic_of_gpu[g]);
    if (routes.distance(gpu, nic) <= 0) return false;
    for (const auto& hop : routes.route(gpu, nic)) {
      const auto& l = t.links[hop.link];
      const int at = hop.reverse ? l.a : l.b;
      if (at != nic && t.kind_of(at) != platforms::VertexKind::kPcieSwitch) return false;
    }
    return true;
  };
  n.nic_near_gpu = pxb(0);
  for (int g = 0; g < t.gpu_count && n.compute_capability >= 90 && n.nvlink; ++g)
    n.nic_near_gpu = n.nic_near_gpu || pxb(g);
  // Channels: NCCL's search takes the fewest channels at its fastest per-channel speed (60 GB/s
  // intra on Hopper, else 40; 48 inter), then doubles them when a channel carries >= 25 GB/s
  // (src/graph/search.cc, speedArrayIntra/Inter, ncclTopoDupChannels; MAXCHANNELS 32).
  const double bw = nodes == 1 ? n.intra_bw_GBps : std::min(n.intra_bw_GBps, n.inter_bw_GBps);
  const double speed = nodes == 1 ? (n.compute_capability >= 90 ? 60.0 : 40.0) : 48.0;
  int ch = std::max(1, static_cast<int>(std::ceil(bw / speed - 1e-9)));
  const double per = bw / ch;
  if (per >= 25.0 && !(n.compute_capability > 80 && per < 50.0 && ch > 4)) ch *= 2;
  n.channels = std::min(ch, 32);
  return n;
}

}  // namespace scalecast::calibration
