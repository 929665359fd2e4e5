#pragma once
// How far equivalence classes would cut flow fidelity's work on a real machine (issue 18): the
// flows of one step of a ring all-reduce across a platform's nodes (every GPU's inter-node ring
// of the hierarchical pattern, edge (n, g) -> (n + 1, g); or the flat ring over all GPUs), their
// routes as the engine builds them, and the coarsest equitable partition of flows and links
// (sim/flow_classes.hpp). A flow step costs about 14 us per SimGrid communication
// (bench/README.md), so the classes are the communications a quotient would post per step.
// With `with_io`, the flows every node starts for its input are in the incidence too: one
// host-to-device copy per GPU (its socket's CPU to the GPU) and one file-system read per node and
// socket (reader k from server k mod servers, the engine's rotation at batch 0;
// sim/job_input.cpp), as the representative-nodes design needs (sim/README.md). Other jobs are
// not. bench_flow_classes prints it.

#include <string>

namespace scalecast::sim {

struct RingStepCensus {
  std::string platform;
  int nodes = 0;
  int gpus_per_node = 0;
  bool flat = false;
  bool with_io = false;
  int ring_flows = 0;
  int flows = 0;  // ring edges, and with_io the copies and reads
  int links = 0;  // distinct links on the flows' routes
  int flow_classes = 0;
  int ring_classes = 0;  // classes among the ring edges
  int link_classes = 0;
  int rounds = 0;
  // One max-min solve of the step (all flows at once, links at their nominal bandwidth, without
  // the platform's per-route bandwidth factors): the links it saturates, and those of them that
  // carry flows started on more than one node, where a representative of one node would have to
  // see the other nodes' load (sim/README.md "Flow fidelity at scale").
  int saturated_links = 0;
  int saturated_shared_links = 0;
  double build_s = 0.0;   // wall: platform load, engine and build
  double routes_s = 0.0;  // wall: resolving every flow's route
  double refine_s = 0.0;  // wall: colour refinement
};

// Once per process (one SimGrid engine). `platform`: a name or path; the first `nodes` nodes are
// built (grown by the platform's rule beyond the file's size) with the calibrated network.
// `with_io` needs a platform with a parallel file system (std::invalid_argument otherwise).
RingStepCensus ring_step_census(const std::string& platform, int nodes, int gpus_per_node,
                                bool flat, bool with_io = false);

}  // namespace scalecast::sim
