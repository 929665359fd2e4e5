#pragma once
// The rings an intra-node all-reduce stage runs on. NCCL searches its rings over the GPUs' best
// paths (src/graph/search.cc, NCCL v2.21.5-1), so on an NVLink mesh every hop of a ring is an
// NVLink, and it runs as many channels as the links carry: a DGX-1V's all-reduce reaches 134.5
// GB/s bus bandwidth, 0.9 of the 150 GB/s of a GPU's six NVLinks [vTrain]. A ring in GPU-number
// order crosses PCIe and QPI twice there (GPUs 3-4 and 7-0 have no NVLink) and moved 15.7 GB/s.
// Here each cycle found also runs in the opposite direction, the links' other half, so that the
// rings together load every link of every GPU, as that measurement shows. SimGrid-free.
//
// Input: per GPU pair its direct links in units (NVLink bricks), 0 where the route between the
// two GPUs goes through a switch, PCIe or the CPUs (`direct_link_units` makes them from route
// bandwidths). Search: repeatedly the Hamiltonian cycle (from GPU 0) of greatest least residual
// units over its hops, ties to the greatest total and then the first in lexicographic order,
// takes one unit from each hop; it stops when no cycle has a unit left on every hop. Output: each
// cycle and its reverse as directed rings of local GPU numbers, every ring carrying the same
// share of the buffer. Where no cycle exists (NVSwitch: every route goes through the switch;
// PCIe; Summit's two sockets, which any ring crosses over X-Bus), for 2 GPUs or fewer, or beyond
// kMaxRingSearchGpus GPUs: one ring in GPU-number order.

#include <vector>

namespace scalecast::sim {

// Brute force over (n-1)!/2 cycles: 181,440 at 10 GPUs.
inline constexpr int kMaxRingSearchGpus = 10;
// At most this many cycles (twice as many directed rings): where the bricks would give more
// (a platform file may give a pair up to 1,024 links), every pair's units are first divided by
// one factor, rounded up, so the rings keep the pairs' proportions and the simulation a bounded
// number of flows per step.
inline constexpr int kMaxRingCycles = 16;

// Units per pair: bandwidth / unit_Bps rounded, at least 1 where a link exists; with unit_Bps 0
// (unknown) the smallest positive bandwidth is the unit. Throws std::invalid_argument unless the
// matrix is square, symmetric, finite, non-negative and 0 on the diagonal.
std::vector<std::vector<int>> direct_link_units(const std::vector<std::vector<double>>& direct_bw,
                                                double unit_Bps);

// Directed rings over GPUs 0..n-1 (n = link_units.size(); a square symmetric matrix of
// non-negative counts with a zero diagonal, else std::invalid_argument).
std::vector<std::vector<int>> intra_node_rings(const std::vector<std::vector<int>>& link_units);

}  // namespace scalecast::sim
