#pragma once
// How gradients are all-reduced: which algorithm (NCCL-style ring, tree, or hierarchical:
// intra-node reduce-scatter over NVLink, inter-node ring or tree per local rank over the rails,
// intra-node all-gather), how tensors are fused into buckets (Horovod fusion threshold and
// cycle time, or static DDP-style buckets when the cycle time is zero), and at which fidelity
// the network is simulated: `flow` makes every step of every rank a SimGrid communication,
// `wave` makes each phase one flow per ring/tree edge carrying the phase's bytes plus the
// analytic latency of its remaining steps.

#include <optional>
#include <string>
#include <string_view>

namespace scalecast::sim {

enum class Algorithm { kRing, kTree, kHierarchical, kAuto };
enum class Fidelity { kFlow, kWave, kAuto };
enum class Library { kNccl, kMpi };

std::string_view to_string(Algorithm a);
std::string_view to_string(Fidelity f);
std::string_view to_string(Library l);
std::optional<Algorithm> parse_algorithm(std::string_view text);
std::optional<Fidelity> parse_fidelity(std::string_view text);
std::optional<Library> parse_library(std::string_view text);

struct AllReduceConfig {
  Library library = Library::kNccl;
  Algorithm algorithm = Algorithm::kAuto;
  double fusion_bytes = 64.0 * 1024 * 1024;  // bucket size limit; 0 = one bucket per tensor
  double cycle_time_s = 0.0;  // Horovod cycle; 0 = static buckets launched when ready (DDP)
  int chunks = 1;             // pipelining chunks of the tree algorithm
  // Inter-node stage of the hierarchical algorithm: ring or tree.
  Algorithm inter_node = Algorithm::kRing;
};

// `auto` resolved: hierarchical when there are several nodes with several GPUs, else ring.
Algorithm resolve_algorithm(Algorithm a, int nodes, int gpus_per_node);
// `auto` resolved by size: flow up to `flow_limit_gpus` GPUs, wave beyond.
Fidelity resolve_fidelity(Fidelity f, int gpus, int flow_limit_gpus = 48);

}  // namespace scalecast::sim
