#include "sim/collective_config.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace scalecast::sim {

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kHierarchical:
      return "hierarchical";
    case Algorithm::kAuto:
      return "auto";
    case Algorithm::kNvls:
      return "nvls";
    case Algorithm::kNvlsTree:
      return "nvls_tree";
    case Algorithm::kCollNetDirect:
      return "collnet_direct";
    case Algorithm::kCollNetChain:
      return "collnet_chain";
  }
  return "?";
}

std::optional<calibration::NcclAlgo> nccl_algo_of(Algorithm a) {
  using calibration::NcclAlgo;
  switch (a) {
    case Algorithm::kRing:
    case Algorithm::kHierarchical:
      return NcclAlgo::kRing;
    case Algorithm::kTree:
      return NcclAlgo::kTree;
    case Algorithm::kNvls:
      return NcclAlgo::kNvls;
    case Algorithm::kNvlsTree:
      return NcclAlgo::kNvlsTree;
    case Algorithm::kCollNetDirect:
      return NcclAlgo::kCollNetDirect;
    case Algorithm::kCollNetChain:
      return NcclAlgo::kCollNetChain;
    case Algorithm::kAuto:
      break;
  }
  return std::nullopt;
}

bool needs_collective_model(Algorithm a) {
  return a == Algorithm::kNvls || a == Algorithm::kNvlsTree || a == Algorithm::kCollNetDirect ||
         a == Algorithm::kCollNetChain;
}

bool collnet_enabled(const AllReduceConfig& c) {
  return c.collnet || c.algorithm == Algorithm::kCollNetDirect ||
         c.algorithm == Algorithm::kCollNetChain;
}

std::string_view to_string(Fidelity f) {
  switch (f) {
    case Fidelity::kFlow:
      return "flow";
    case Fidelity::kWave:
      return "wave";
    case Fidelity::kAuto:
      return "auto";
  }
  return "?";
}

std::string_view to_string(Library l) {
  switch (l) {
    case Library::kNccl:
      return "nccl";
    case Library::kMpi:
      return "mpi";
    case Library::kMpiCpu:
      return "mpi_cpu";
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(std::string_view text) {
  for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kHierarchical,
                      Algorithm::kAuto, Algorithm::kNvls, Algorithm::kNvlsTree,
                      Algorithm::kCollNetDirect, Algorithm::kCollNetChain})
    if (text == to_string(a)) return a;
  return std::nullopt;
}

std::optional<Fidelity> parse_fidelity(std::string_view text) {
  for (Fidelity f : {Fidelity::kFlow, Fidelity::kWave, Fidelity::kAuto})
    if (text == to_string(f)) return f;
  return std::nullopt;
}

std::optional<Library> parse_library(std::string_view text) {
  if (text == "nccl") return Library::kNccl;
  if (text == "mpi") return Library::kMpi;
  if (text == "mpi_cpu") return Library::kMpiCpu;
  return std::nullopt;
}

std::string_view to_string(Bucketing b) {
  switch (b) {
    case Bucketing::kFusion:
      return "fusion";
    case Bucketing::kDdp:
      return "ddp";
    case Bucketing::kPacks:
      return "packs";
  }
  return "?";
}

std::optional<Bucketing> parse_bucketing(std::string_view text) {
  for (Bucketing b : {Bucketing::kFusion, Bucketing::kDdp, Bucketing::kPacks})
    if (text == to_string(b)) return b;
  return std::nullopt;
}

Algorithm resolve_algorithm(Algorithm a, int nodes, int gpus_per_node) {
  if (a != Algorithm::kAuto && !needs_collective_model(a)) return a;
  // The NCCL algorithms run on the hierarchical pattern's stages across nodes (see
  // job_collectives).
  return nodes > 1 && gpus_per_node > 1 ? Algorithm::kHierarchical : Algorithm::kRing;
}

Algorithm job_pattern(Algorithm a, bool per_bucket, int nodes, int gpus_per_node) {
  if (per_bucket) return nodes > 1 ? Algorithm::kHierarchical : Algorithm::kRing;
  return resolve_algorithm(a, nodes, gpus_per_node);
}

double flat_ring_inter_node_volume(int nodes, int ranks) {
  if (nodes < 2 || ranks < nodes)
    throw std::invalid_argument(fmt::format(
        "flat_ring_inter_node_volume: needs 2 or more nodes and at least one GPU per node, got {} "
        "nodes and {} GPUs",
        nodes, ranks));
  const double n = nodes, p = ranks;
  return ((p - 1.0) / p) / ((n - 1.0) / n);
}

double nvls_intra_volume(int gpus) {
  if (gpus < 3)
    throw std::invalid_argument(
        fmt::format("nvls_intra_volume: NVLS needs 3 or more GPUs on the switch, got {}", gpus));
  // Volume ratio NVLS / ring on g GPUs: ((g+1)/g) / (2(g-1)/g).
  const auto volume = [](double g) { return (g + 1.0) / (2.0 * (g - 1.0)); };
  // One DGX H100 (8 GPUs), NCCL's bus bandwidth: NVLS 480 GB/s, ring 365-370 [nccl#1455].
  constexpr double kNvlsBusbw = 480.0, kRingBusbw = 367.5;
  const double switch_efficiency = (kNvlsBusbw / kRingBusbw) * volume(8.0);
  return volume(gpus) / switch_efficiency;
}

Fidelity resolve_fidelity(Fidelity f, int gpus, int flow_limit_gpus) {
  if (f != Fidelity::kAuto) return f;
  return gpus <= flow_limit_gpus ? Fidelity::kFlow : Fidelity::kWave;
}

double flow_communications_per_allreduce(Algorithm resolved, int nodes, int gpus) {
  const double n = nodes, g = gpus, ranks = n * g;
  switch (resolved) {
    case Algorithm::kRing:
      return ranks * 2.0 * (ranks - 1.0);
    case Algorithm::kHierarchical:
      return ranks * 2.0 * (g - 1.0) + ranks * 2.0 * (n - 1.0);
    default:
      return 0.0;
  }
}

std::string flow_cost_warning(Fidelity fidelity, int flow_limit_gpus, Algorithm algorithm,
                              int nodes, int gpus_per_node) {
  const int gpus = nodes * gpus_per_node;
  if (resolve_fidelity(fidelity, gpus, flow_limit_gpus) != Fidelity::kFlow) return "";
  // As the job resolves it, with NCCL's model present (auto or an NCCL algorithm: per bucket).
  const Algorithm resolved =
      job_pattern(algorithm, algorithm == Algorithm::kAuto || needs_collective_model(algorithm),
                  nodes, gpus_per_node);
  const double count = flow_communications_per_allreduce(resolved, nodes, gpus_per_node);
  if (count <= kFlowWarnCommunications) return "";
  return fmt::format(
      "{} nodes ({} GPUs) at fidelity flow simulate every step of every rank: {:.1f} million "
      "communications per {} all-reduce, about {:.0f} s each at the 14 us per communication "
      "measured on a 2-core machine; fidelity wave simulates one flow per ring edge and phase and "
      "agrees with flow within 2 % where nothing contends",
      nodes, gpus, count / 1e6, to_string(resolved), count * 14e-6);
}

}  // namespace scalecast::sim
