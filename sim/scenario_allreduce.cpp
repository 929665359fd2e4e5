#include "sim/scenario_allreduce.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "calibration/collective_model.hpp"
#include "common/config_error.hpp"
#include "sim/scenario_keys.hpp"
#include "sim/transport.hpp"

namespace scalecast::sim {

using common::ConfigNode;
using common::Quantity;

namespace {

constexpr double kMaxFusionBytes = 64.0 * 1073741824.0;  // 64 GiB, above any GPU's memory
constexpr double kMaxCycleTime_s = 1.0;                  // Horovod's default cycle is 1-5 ms
// The shortest cycle: a coordinator thread does not poll faster than this, and a step of
// seconds then has at most ~1e6 ticks (a 4.9e-324 s cycle made the tick arithmetic infinite).
constexpr double kMinCycleTime_s = 1e-6;
// Packs and tree chunks are counts of collectives and pipeline steps per bucket: a million of
// either on one node ran for minutes. A model has at most thousands of gradient tensors (1,024
// packs: 1 s on one Summit node). Tree chunks cost more than linearly (one Summit node: 64 in
// 1.4 s, 256 in 19 s, 1,024 in 151 s), so the limit is `auto`'s own cap at flow fidelity.
constexpr int kMaxPacks = 1024;
constexpr int kMaxChunks = 64;

// A buffer is 0 (none) or whole bytes; a fraction of a byte is a typo, not a size.
double buffer_bytes(const ConfigNode& v) {
  const double b = v.as_quantity_in(Quantity::kSize, 0.0, kMaxFusionBytes);
  if (b > 0.0 && b < 1.0) v.fail("expected 0 or at least 1 B, got \"" + v.as_string() + "\"");
  return b;
}

// `collnet: true` is a request to NCCL's tuning model for the fabric's in-network reduction:
// with another library, without the tuner, or on a fabric without SHARP it would change
// nothing, silently, so it is refused at the key.
void check_collnet(const ConfigNode& a, const AllReduceConfig& c,
                   const platforms::Platform& machine) {
  if (!c.collnet) return;
  const ConfigNode key = a.has("collnet") ? a.required("collnet") : a;
  if (c.library != Library::kNccl)
    key.fail("expected false: CollNet is NCCL's, and allreduce.library is " +
             std::string(to_string(c.library)));
  if (!c.nccl_tuner)
    key.fail(
        "expected false: CollNet is a choice of NCCL's tuning model, and allreduce.tuner is none");
  if (!machine.network.sharp)
    key.fail(fmt::format(
        "expected false: CollNet needs in-network reduction (SHARP), and the network of {} does "
        "not declare it (network.sharp)",
        machine.name));
}

// Settings that the chosen library and algorithm never read would change nothing, silently (or,
// for an NCCL-only algorithm under MPI, stop the point with an internal error): refused at the
// key. A key stating its default (`inter_node: ring`, `chunks: auto`, `tuner: nccl`) asks for
// nothing and stays accepted, so a base scenario can be swept over algorithms and libraries.
void check_keys_apply(const ConfigNode& a, const AllReduceConfig& c) {
  const auto refuse = [&](const char* key, const std::string& why) {
    if (a.has(key)) a.required(key).fail("not used " + why);
  };
  const bool tree_inter = c.inter_node == Algorithm::kTree;
  if (c.library == Library::kMpiCpu) {
    const std::string why =
        "with library mpi_cpu: Horovod's CPU path runs Open MPI's ring between the ranks' CPU "
        "sockets, with no NCCL algorithm, protocol or tree";
    if (c.algorithm != Algorithm::kAuto && c.algorithm != Algorithm::kRing)
      refuse("algorithm", why);
    if (c.protocol) refuse("protocol", why);
    if (tree_inter) refuse("inter_node", why);
    if (c.chunks > 0) refuse("chunks", why);
    return;
  }
  if (c.library == Library::kMpi) {
    const std::string why =
        "with library mpi: CUDA-aware MPI runs the flow patterns without NCCL's tuning model";
    if (c.protocol) refuse("protocol", why + " (protocols are NCCL's)");
    if (needs_collective_model(c.algorithm))
      refuse("algorithm", why + " (this algorithm is NCCL's)");
  }
  // NCCL's tuner picks each bucket's algorithm (and the inter-node stage) itself.
  const bool per_bucket = c.library == Library::kNccl && c.nccl_tuner &&
                          (c.algorithm == Algorithm::kAuto || needs_collective_model(c.algorithm));
  const bool hierarchical =
      !per_bucket && (c.algorithm == Algorithm::kHierarchical || c.algorithm == Algorithm::kAuto);
  const std::string with = "with algorithm " + std::string(to_string(c.algorithm));
  if (tree_inter && per_bucket)
    refuse("inter_node",
           with +
               ": NCCL's tuning model chooses each bucket's inter-node algorithm (set "
               "algorithm: hierarchical, or tuner: none, to fix it)");
  else if (tree_inter && !hierarchical)
    refuse("inter_node", with + ": it picks the inter-node stage of the hierarchical algorithm");
  const bool tree = per_bucket || c.algorithm == Algorithm::kTree || (hierarchical && tree_inter);
  if (!tree && c.chunks > 0)
    refuse("chunks", with + (hierarchical ? " and inter_node ring" : "") +
                         ": it pipelines the tree all-reduce, and no tree runs here");
}

}  // namespace

void load_allreduce(const ConfigNode& a, AllReduceConfig& c) {
  a.check_keys({"library", "algorithm", "protocol", "inter_node", "fusion_buffer", "cycle_time",
                "cycle_phase", "chunks", "bucketing", "first_bucket", "packs", "after_backward",
                "sm_contention", "tuner", "transport", "collnet"});
  if (auto v = a.optional("tuner")) {
    const std::string t = v->as_string();
    if (t != "nccl" && t != "none") v->fail("expected nccl or none, got \"" + t + "\"");
    c.nccl_tuner = t == "nccl";
  }
  if (auto v = a.optional("library"))
    c.library = enum_value<Library>(*v, parse_library, "nccl, mpi, mpi_cpu");
  if (auto v = a.optional("transport"))
    c.transport = enum_value<Transport>(*v, parse_transport, "native, tcp");
  if (auto v = a.optional("algorithm"))
    c.algorithm = enum_value<Algorithm>(
        *v, parse_algorithm,
        "auto, ring, tree, hierarchical, nvls, nvls_tree, collnet_direct, collnet_chain");
  if (auto v = a.optional("protocol"); v && v->as_string() != "auto")
    c.protocol = enum_value<calibration::NcclProto>(*v, calibration::parse_nccl_proto,
                                                    "auto, ll, ll128, simple");
  if (auto v = a.optional("inter_node")) {
    c.inter_node = enum_value<Algorithm>(*v, parse_algorithm, "ring, tree");
    if (c.inter_node != Algorithm::kRing && c.inter_node != Algorithm::kTree)
      v->fail("expected ring or tree, got \"" + v->as_string() + "\"");
  }
  if (auto v = a.optional("fusion_buffer")) c.fusion_bytes = buffer_bytes(*v);
  if (auto v = a.optional("bucketing")) {
    c.bucketing = enum_value<Bucketing>(*v, parse_bucketing, "fusion, ddp, packs");
    // A framework's Horovod cycle does not carry over to another rule.
    if (c.bucketing != Bucketing::kFusion) c.cycle_time_s = 0.0;
  }
  if (auto v = a.optional("cycle_time")) {
    // 0 = static buckets; a cycle is a period of the coordinator, far below a step.
    c.cycle_time_s = v->as_quantity_in(Quantity::kTime, 0.0, kMaxCycleTime_s);
    if (c.cycle_time_s > 0.0 && c.cycle_time_s < kMinCycleTime_s)
      v->fail(
          fmt::format("expected 0 (no cycle: static buckets) or a cycle of at least 1 us, got "
                      "\"{}\"",
                      v->as_string()));
    if (c.cycle_time_s > 0.0 && c.bucketing != Bucketing::kFusion)
      v->fail("expected 0 with bucketing " + std::string(to_string(c.bucketing)) +
              " (Horovod's cycle applies to bucketing: fusion)");
  }
  if (auto v = a.optional("cycle_phase")) {
    // stratified (the default) or one alignment of the ticks with the step, in [0, 1).
    if (v->as_string() == "stratified") {
      c.cycle_phase.reset();
    } else {
      // Read as the config reader reads numbers; a word or a number outside [0, 1) gets one
      // message naming both forms the key takes.
      double phase = -1.0;
      try {
        phase = v->as_double();
      } catch (const common::ConfigError&) {
      }
      if (!(phase >= 0.0 && phase < 1.0))
        v->fail(
            fmt::format("expected stratified or a fraction of the cycle from 0 up to (not "
                        "including) 1, got \"{}\"",
                        v->as_string()));
      c.cycle_phase = phase;
    }
    if (!(c.cycle_time_s > 0.0))
      v->fail(
          "expected only with a Horovod cycle (allreduce.cycle_time above 0, bucketing "
          "fusion; framework: tensorflow sets one)");
  }
  if (auto v = a.optional("first_bucket")) {
    if (c.bucketing != Bucketing::kDdp) v->fail("expected only with bucketing: ddp");
    c.first_bucket_bytes = buffer_bytes(*v);
  }
  if (auto v = a.optional("packs")) {
    if (c.bucketing != Bucketing::kPacks) v->fail("expected only with bucketing: packs");
    c.packs = v->as_int_field(1, kMaxPacks);
  }
  if (auto v = a.optional("after_backward")) c.after_backward = v->as_bool();
  if (auto v = a.optional("sm_contention")) c.sm_contention = v->as_bool();
  if (auto v = a.optional("collnet")) c.collnet = v->as_bool();
  if (auto v = a.optional("chunks"))
    c.chunks = v->as_string() == "auto" ? 0 : v->as_int_field(1, kMaxChunks);
  // An NCCL-only algorithm or an NCCL protocol asks for NCCL's tuning model.
  if (needs_collective_model(c.algorithm) || c.protocol.has_value()) {
    if (auto v = a.optional("tuner"); v && !c.nccl_tuner)
      v->fail("expected nccl: the algorithm or protocol chosen here needs NCCL's tuning model");
    c.nccl_tuner = true;
  }
}

// An NCCL algorithm or protocol forced by the scenario must exist on the platform at every node
// count (NVLS needs Hopper and NVSwitch, CollNet `network.sharp`): refused here, before any
// simulation, with the key's location.
void check_collective_choice(const ConfigNode& a, const Scenario& s,
                             const platforms::Platform& machine) {
  const AllReduceConfig& c = s.allreduce;
  check_keys_apply(a, c);
  check_collnet(a, c, machine);
  const bool forced = needs_collective_model(c.algorithm) || c.protocol.has_value();
  if (c.library != Library::kNccl || !forced) return;
  const platforms::NodeType& type = machine.node_types[machine.partitions.front().node_type];
  const int gpus = s.gpus_per_node > 0 ? std::min(s.gpus_per_node, type.gpu_count) : type.gpu_count;
  const bool hierarchical = c.algorithm == Algorithm::kHierarchical;
  for (int n : s.nodes) {
    // The hierarchical algorithm's stages run on the node's GPUs and on one GPU per node.
    for (auto [nodes, g] : hierarchical ? std::vector<std::pair<int, int>>{{1, gpus}, {n, 1}}
                                        : std::vector<std::pair<int, int>>{{n, gpus}}) {
      const calibration::CollectiveModel m(
          calibration::nccl_topology(machine, type, nodes, g, collnet_enabled(c)));
      try {
        std::optional<calibration::NcclAlgo> algo = nccl_algo_of(c.algorithm);
        if (hierarchical && nodes > 1 && c.inter_node == Algorithm::kTree)
          algo = calibration::NcclAlgo::kTree;
        m.choose(c.fusion_bytes > 0 ? c.fusion_bytes : 1.0, algo, c.protocol);
      } catch (const std::invalid_argument& e) {
        const ConfigNode key =
            c.protocol && !needs_collective_model(c.algorithm) && a.has("protocol")
                ? a.required("protocol")
                : (a.has("algorithm") ? a.required("algorithm") : a);
        key.fail(
            fmt::format("at {} node{} of {}: {}", n, n > 1 ? "s" : "", machine.name, e.what()));
      }
    }
  }
}

}  // namespace scalecast::sim
