#pragma once
// The all-reduce as NCCL runs it: NCCL's tuner picks, per call, the algorithm (ring, tree,
// NVLS, NVLS tree, CollNet Direct/Chain) and protocol (LL, LL128, Simple) of least predicted
// time t = latency + bytes / bandwidth over the algorithms and protocols its defaults enable
// (src/graph/tuning.cc, NCCL v2.21.5-1). CollectiveModel holds those terms for one
// communicator (ranks, nodes, link classes, fabric capabilities, derived from a platform by
// nccl_topology()), and, where a calibration database holds measured all-reduces for the
// communicator's device, link class and rank count, replaces an algorithm's datasheet terms by
// the measured latency-bandwidth fit (tier "measured"). SimGrid-free: sim/ turns a choice into
// flows (bytes / efficiency on the real routes) plus the latency the routes do not carry.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/collective_algorithms.hpp"
#include "calibration/database.hpp"
#include "calibration/efficiency_fit.hpp"
#include "platforms/platform.hpp"

namespace scalecast::calibration {

enum class CollectiveTier { kMeasured, kDatasheet };
std::string_view to_string(CollectiveTier t);  // "measured", "datasheet"

// One (algorithm, protocol) candidate for a call of `bytes`.
struct CollectiveChoice {
  NcclAlgo algo = NcclAlgo::kRing;
  NcclProto proto = NcclProto::kSimple;
  CollectiveTier tier = CollectiveTier::kDatasheet;
  double latency_s = 0.0;      // fixed part of the call
  double bandwidth_Bps = 0.0;  // algorithm bandwidth (buffer bytes per second)
  double time_s = 0.0;         // latency_s + bytes / bandwidth_Bps (tree size correction incl.)
  // Fraction of the links' bandwidth the call turns into buffer bytes, relative to what the
  // simulated flows of its pattern achieve: the protocol's efficiency (datasheet), or the
  // measured bandwidth over the datasheet Simple bandwidth of the algorithm (measured).
  double efficiency = 1.0;
};

// Measured all-reduce rows (op collective, pass all_reduce) of one (algorithm, link class,
// ranks): algorithm "" = NCCL's own choice; link class "intra_node" (dims nodes 1 or absent) or
// "inter_node" (nodes > 1).
struct MeasuredCollectiveKey {
  std::string algorithm;
  std::string link_class;
  int ranks = 0;
  auto operator<=>(const MeasuredCollectiveKey&) const = default;
};

class CollectiveModel {
 public:
  explicit CollectiveModel(NcclTopology topology);

  const NcclTopology& topology() const { return topology_; }
  // "intra_node" on one node, "inter_node" across nodes.
  std::string link_class() const;

  // Every enabled candidate at `bytes`, in NCCL's (algorithm, protocol) order.
  std::vector<CollectiveChoice> candidates(double bytes) const;
  // NCCL's pick: least time among candidates, optionally restricted to one algorithm and/or one
  // protocol (NCCL_ALGO / NCCL_PROTO). Throws std::invalid_argument when nothing is left (e.g.
  // nvls on a machine without NVSwitch), naming what was asked.
  CollectiveChoice choose(double bytes, std::optional<NcclAlgo> algo = std::nullopt,
                          std::optional<NcclProto> proto = std::nullopt) const;
  // The datasheet terms of one (algorithm, protocol), enabled or not (0 bandwidth = unusable).
  CollectiveChoice datasheet(NcclAlgo algo, NcclProto proto, double bytes) const;

  // Reads the all-reduce rows of `device` from `db` and fits t = a + S/b per key with three or
  // more sizes; those of this model's link class and rank count take the place of their
  // algorithm's datasheet terms. Returns how many fits apply to this communicator.
  int use_measurements(const Database& db, const std::string& device);
  const std::map<MeasuredCollectiveKey, AlphaBetaFit>& measured() const { return measured_; }

 private:
  const AlphaBetaFit* measured_fit(std::string_view algorithm) const;

  NcclTopology topology_;
  std::vector<std::unique_ptr<NcclAlgorithm>> algorithms_;
  std::map<MeasuredCollectiveKey, AlphaBetaFit> measured_;
};

// The measured all-reduce lines of `device` in `db` (the fits use_measurements takes).
std::map<MeasuredCollectiveKey, AlphaBetaFit> fit_measured_all_reduces(const Database& db,
                                                                       const std::string& device);

// NCCL's view of `nodes` nodes of node type `t` of `platform`, `gpus_per_node` GPUs
// each: compute capability from the GPU catalog key, NVLink/NVSwitch from the node's links,
// GPU and NIC bandwidths, CollNet where the fabric has SHARP (`network.sharp`) and the job
// enables it (`collnet_enabled`, NCCL_COLLNET_ENABLE=1; off in NCCL by default), channels as
// NCCL's graph search would find them (fewest channels at its fastest per-channel speed, then
// duplicated).
NcclTopology nccl_topology(const platforms::Platform& platform, const platforms::NodeType& t,
                           int nodes, int gpus_per_node, bool collnet_enabled);

std::optional<NcclAlgo> parse_nccl_algo(std::string_view text);
std::optional<NcclProto> parse_nccl_proto(std::string_view text);

}  // namespace scalecast::calibration
