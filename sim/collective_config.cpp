#include "sim/collective_config.hpp"

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
  }
  return "?";
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

std::string_view to_string(Library l) { return l == Library::kNccl ? "nccl" : "mpi"; }

std::optional<Algorithm> parse_algorithm(std::string_view text) {
  for (Algorithm a :
       {Algorithm::kRing, Algorithm::kTree, Algorithm::kHierarchical, Algorithm::kAuto})
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
  if (a != Algorithm::kAuto) return a;
  return nodes > 1 && gpus_per_node > 1 ? Algorithm::kHierarchical : Algorithm::kRing;
}

Fidelity resolve_fidelity(Fidelity f, int gpus, int flow_limit_gpus) {
  if (f != Fidelity::kAuto) return f;
  return gpus <= flow_limit_gpus ? Fidelity::kFlow : Fidelity::kWave;
}

}  // namespace scalecast::sim
