// How many SimGrid communications one step of a ring all-reduce would need at flow fidelity if
// each equivalence class of flows were simulated once (sim/ring_step_classes.hpp, issue 18),
// against the one per flow posted today.
// Usage: bench_flow_classes PLATFORM NODES [GPUS_PER_NODE] [flat|io]   (from the repository root)
// `io`: the nodes' input copies and file-system reads are in the incidence too.

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "sim/ring_step_classes.hpp"

int main(int argc, char** argv) {
  const std::string platform = argc > 1 ? argv[1] : "summit";
  const int nodes = argc > 2 ? std::atoi(argv[2]) : 64;
  const int gpus = argc > 3 ? std::atoi(argv[3]) : 6;
  const std::string mode = argc > 4 ? argv[4] : "";
  const bool flat = mode == "flat", io = mode == "io";
  if (nodes < 2 || gpus < 1 || !(mode.empty() || flat || io)) {
    std::fprintf(stderr,
                 "usage: bench_flow_classes PLATFORM NODES(>= 2) [GPUS_PER_NODE] [flat|io]\n");
    return 1;
  }
  scalecast::sim::RingStepCensus c;
  try {
    c = scalecast::sim::ring_step_census(platform, nodes, gpus, flat, io);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_flow_classes: %s\n", e.what());
    return 1;
  }
  std::printf(
      "%s, %d nodes x %d GPUs, %s ring step%s: %d flows (%d ring edges) over %d links -> %d flow "
      "classes (%d among the ring edges), %d link classes (%d rounds); one max-min solve "
      "saturates %d links, %d of them carrying flows of several nodes | build %.2f s, routes "
      "%.2f s, refinement %.2f s\n",
      c.platform.c_str(), c.nodes, c.gpus_per_node, c.flat ? "flat" : "inter-node",
      c.with_io ? " with input copies and file-system reads" : "", c.flows, c.ring_flows, c.links,
      c.flow_classes, c.ring_classes, c.link_classes, c.rounds, c.saturated_links,
      c.saturated_shared_links, c.build_s, c.routes_s, c.refine_s);
  std::fflush(nullptr);
  std::_Exit(0);
}
