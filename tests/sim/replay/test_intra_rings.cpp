// The intra-node ring search (sim/intra_rings.hpp) on the GPU meshes of shipped platforms:
// every hop a direct link, every link unit loaded by one ring each way, and one ring in GPU
// order where no ring of direct links exists. SimGrid-free.

#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "sim/intra_rings.hpp"

using namespace scalecast::sim;

namespace {

using Matrix = std::vector<std::vector<int>>;

// The DGX-1V hybrid cube-mesh: NVLink bricks per GPU pair (platforms/dgx1-v100.yaml).
const Matrix kDgx1 = {{0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0},
                      {2, 1, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
                      {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0}};

// How many ring hops go from a to b, over all rings.
Matrix hop_counts(const std::vector<std::vector<int>>& rings, int n) {
  Matrix c(n, std::vector<int>(n, 0));
  for (const std::vector<int>& r : rings) {
    REQUIRE(static_cast<int>(r.size()) == n);
    std::vector<int> sorted = r;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < n; ++i) REQUIRE(sorted[i] == i);  // a permutation of the GPUs
    for (int i = 0; i < n; ++i) ++c[r[i]][r[(i + 1) % n]];
  }
  return c;
}

std::vector<int> identity(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE(
      "intra rings: the DGX-1V cube-mesh is covered by rings of NVLinks, one per brick each way") {
    const auto rings = intra_node_rings(kDgx1);
    // 24 bricks, 8 per cycle: three cycles, each also reversed.
    CHECK(rings.size() == 6);
    // Each directed pair carries as many ring hops as it has bricks: every hop is an NVLink and
    // every brick of every GPU is loaded in both directions.
    CHECK(hop_counts(rings, 8) == kDgx1);
    // The GPU-number ring is not among them: GPUs 3-4 and 7-0 have no NVLink.
    for (const auto& r : rings) CHECK(r != identity(8));
  }

  TEST_CASE("intra rings: four fully connected GPUs with two bricks per pair use all twelve") {
    const Matrix m = {{0, 2, 2, 2}, {2, 0, 2, 2}, {2, 2, 0, 2}, {2, 2, 2, 0}};
    const auto rings = intra_node_rings(m);
    CHECK(rings.size() == 6);
    CHECK(hop_counts(rings, 4) == m);
  }

  TEST_CASE("intra rings: no ring of direct links leaves the GPU-number ring") {
    const std::vector<std::vector<int>> one = {identity(8)};
    // NVSwitch: every route goes through the switch, no direct link.
    CHECK(intra_node_rings(Matrix(8, std::vector<int>(8, 0))) == one);
    // Summit: two NVLink triangles (GPUs 0-2 and 3-5), joined only through the CPUs.
    Matrix summit(6, std::vector<int>(6, 0));
    for (int a = 0; a < 6; ++a)
      for (int b = 0; b < 6; ++b)
        if (a != b && a / 3 == b / 3) summit[a][b] = 2;
    CHECK(intra_node_rings(summit) == std::vector<std::vector<int>>{identity(6)});
    // One or two GPUs: the ring is the GPU order (two GPUs already use both directions).
    CHECK(intra_node_rings(Matrix{{0}}) == std::vector<std::vector<int>>{{0}});
    CHECK(intra_node_rings(Matrix{{0, 4}, {4, 0}}) == std::vector<std::vector<int>>{{0, 1}});
    // Beyond kMaxRingSearchGpus the search is not run.
    const int n = kMaxRingSearchGpus + 1;
    Matrix full(n, std::vector<int>(n, 1));
    for (int i = 0; i < n; ++i) full[i][i] = 0;
    CHECK(intra_node_rings(full) == std::vector<std::vector<int>>{identity(n)});
  }

  TEST_CASE("intra rings: a mesh of many bricks per pair stays within kMaxRingCycles cycles") {
    // Eight GPUs, every pair 1,024 links (the most a platform file accepts): 3,584 cycles of
    // single bricks, cut to kMaxRingCycles with every pair still loaded alike.
    Matrix m(8, std::vector<int>(8, 1024));
    for (int i = 0; i < 8; ++i) m[i][i] = 0;
    const auto rings = intra_node_rings(m);
    CHECK(rings.size() == 2 * kMaxRingCycles);
    const Matrix hops = hop_counts(rings, 8);
    int lo = 1 << 30, hi = 0;
    for (int a = 0; a < 8; ++a)
      for (int b = 0; b < 8; ++b)
        if (a != b) {
          lo = std::min(lo, hops[a][b]);
          hi = std::max(hi, hops[a][b]);
        }
    CHECK(lo >= 1);       // every pair carries rings
    CHECK(hi - lo <= 1);  // and about equally
  }

  TEST_CASE("intra rings: link units from route bandwidths") {
    const double brick = 25e9;
    const std::vector<std::vector<double>> bw = {{0, 50e9, 25e9}, {50e9, 0, 0}, {25e9, 0, 0}};
    CHECK(direct_link_units(bw, brick) == Matrix{{0, 2, 1}, {2, 0, 0}, {1, 0, 0}});
    // Unknown brick: the narrowest direct link is the unit.
    CHECK(direct_link_units(bw, 0.0) == Matrix{{0, 2, 1}, {2, 0, 0}, {1, 0, 0}});
    // A link of any bandwidth over a tiny brick stays a count an int holds.
    CHECK(direct_link_units({{0, 1e300}, {1e300, 0}}, 1.0) == Matrix{{0, 1 << 20}, {1 << 20, 0}});
    // Links narrower than a brick still count as one.
    CHECK(direct_link_units({{0, 5e9}, {5e9, 0}}, brick) == Matrix{{0, 1}, {1, 0}});
  }

  TEST_CASE("intra rings: malformed matrices are refused") {
    CHECK_THROWS_AS(direct_link_units({{0, 1}, {2, 0}}, 1.0), std::invalid_argument);
    CHECK_THROWS_AS(direct_link_units({{1, 0}, {0, 0}}, 1.0), std::invalid_argument);
    CHECK_THROWS_AS(direct_link_units({{0, -1}, {-1, 0}}, 1.0), std::invalid_argument);
    CHECK_THROWS_AS(direct_link_units({{0, 1}}, 1.0), std::invalid_argument);
    CHECK_THROWS_AS(intra_node_rings({{0, 1, 0}, {1, 0, 1}, {0, 2, 0}}), std::invalid_argument);
    CHECK_THROWS_AS(intra_node_rings({{0, -1}, {-1, 0}}), std::invalid_argument);
    CHECK_THROWS_AS(intra_node_rings({{0, 1}, {1}}), std::invalid_argument);
  }
}
