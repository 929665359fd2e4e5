#pragma once
// Equivalence classes of flows for flow fidelity at scale (issue 18, sim/README.md "Flow
// fidelity at scale"): the coarsest equitable partition of a set of flows and the links they
// cross, found by colour refinement. Within it every flow of a class crosses the same number of
// links of each link class, and every link of a class carries the same number of flows of each
// flow class, so max-min fair sharing (progressive filling) gives every flow of a class the same
// rate: one representative per class, its route listing each link as often as the class has
// members on it, would stand for the whole class (test `simgrid: a link listed k times ...`).
// SimGrid-free: routes are link indices.

#include <cstdint>
#include <vector>

namespace scalecast::sim {

struct FlowIncidence {
  // Per flow: the links it crosses, by index (a link may repeat). Indices are < link_colour.size().
  std::vector<std::vector<int>> routes;
  // Initial colours: flows that may not share a class differ here (job, program, variability,
  // bytes, start); links by what max-min sharing sees of them (capacity, latency).
  std::vector<std::uint64_t> flow_colour;
  std::vector<std::uint64_t> link_colour;
};

struct FlowClasses {
  std::vector<int> flow_class;  // per flow, 0 .. flow_classes - 1
  std::vector<int> link_class;  // per link, 0 .. link_classes - 1; -1 for a link on no route
  int flow_classes = 0;
  int link_classes = 0;
  int rounds = 0;  // refinement rounds until stable
};

// Deterministic: the class numbers follow the sorted colour signatures, not the input order's
// accidents beyond the initial colours. Throws std::invalid_argument on a route naming a link
// out of range or colour vectors of the wrong size.
FlowClasses equitable_classes(const FlowIncidence& incidence);

// Max-min fair rates of the flows by progressive filling, all flows present at once: raise every
// unfrozen flow's rate together until a link is full, freeze the flows crossing it, repeat (a
// link listed k times in a route counts k times). `capacity` per link index; a link whose
// remaining capacity is within 1e-9 of its capacity's scale after the fill is saturated
// (`saturated`, optional, gets one flag per link). Throws std::invalid_argument on a capacity
// vector of the wrong size or a capacity that is not positive.
std::vector<double> max_min_rates(const FlowIncidence& incidence,
                                  const std::vector<double>& capacity,
                                  std::vector<bool>* saturated = nullptr);

}  // namespace scalecast::sim
