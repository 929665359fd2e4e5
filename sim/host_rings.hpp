#pragma once
// The intra-node rings (sim/intra_rings.hpp) over the GPU hosts of one node on a built
// platform: a route of exactly one link between two hosts is a direct link, its bandwidth the
// lesser of its two directions. Used by the data-parallel job and the LLM job's communicators.

#include <vector>

namespace simgrid::s4u {
class Host;
}

namespace scalecast::sim {

// Directed rings over hosts 0..n-1 (intra_node_rings); `link_unit_Bps` is one NVLink brick
// (0: unknown). Fewer than 3 or more than kMaxRingSearchGpus hosts: one ring in host order,
// without looking at a route.
std::vector<std::vector<int>> rings_over_hosts(const std::vector<simgrid::s4u::Host*>& hosts,
                                               double link_unit_Bps);

}  // namespace scalecast::sim
