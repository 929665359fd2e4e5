#include "sim/intra_rings.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace scalecast::sim {
namespace {

std::vector<int> identity(int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// The cycle from GPU 0 of greatest (least residual, total residual), first in lexicographic
// order on ties; empty when every cycle has a hop without a unit left. A cycle and its mirror
// are one cycle: only orders with tail[0] < tail.back() are tried.
std::vector<int> best_cycle(const std::vector<std::vector<int>>& residual) {
  const int n = static_cast<int>(residual.size());
  std::vector<int> tail(n - 1);
  std::iota(tail.begin(), tail.end(), 1);
  std::vector<int> best;
  int best_min = 0, best_sum = -1;
  do {
    if (tail.front() > tail.back()) continue;
    int lo = residual[0][tail.front()], sum = lo;
    for (int k = 0; k + 1 < n - 1 && lo > 0; ++k) {
      const int r = residual[tail[k]][tail[k + 1]];
      lo = std::min(lo, r);
      sum += r;
    }
    const int back = residual[tail.back()][0];
    lo = std::min(lo, back);
    sum += back;
    if (lo <= 0) continue;
    if (lo > best_min || (lo == best_min && sum > best_sum)) {
      best_min = lo;
      best_sum = sum;
      best.assign(1, 0);
      best.insert(best.end(), tail.begin(), tail.end());
    }
  } while (std::next_permutation(tail.begin(), tail.end()));
  return best;
}

}  // namespace

std::vector<std::vector<int>> direct_link_units(const std::vector<std::vector<double>>& direct_bw,
                                                double unit_Bps) {
  const int n = static_cast<int>(direct_bw.size());
  double unit = unit_Bps > 0.0 ? unit_Bps : std::numeric_limits<double>::infinity();
  for (int i = 0; i < n; ++i) {
    if (static_cast<int>(direct_bw[i].size()) != n)
      throw std::invalid_argument("direct_link_units: the bandwidth matrix must be square");
    for (int j = 0; j < n; ++j) {
      const double b = direct_bw[i][j];
      if (!(b >= 0.0) || !std::isfinite(b) || b != direct_bw[j][i] || (i == j && b != 0.0))
        throw std::invalid_argument(
            "direct_link_units: bandwidths must be finite, non-negative, symmetric and 0 on the "
            "diagonal (entry " +
            std::to_string(i) + "," + std::to_string(j) + ")");
      if (unit_Bps <= 0.0 && b > 0.0) unit = std::min(unit, b);
    }
  }
  // At most 2^20 units a pair: a link of any bandwidth over a small brick stays an int (the
  // search divides them down to kMaxRingCycles cycles anyway).
  constexpr double kMaxUnits = 1 << 20;
  std::vector<std::vector<int>> u(n, std::vector<int>(n, 0));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (direct_bw[i][j] > 0.0)
        u[i][j] = static_cast<int>(std::clamp(std::round(direct_bw[i][j] / unit), 1.0, kMaxUnits));
  return u;
}

std::vector<std::vector<int>> intra_node_rings(const std::vector<std::vector<int>>& link_units) {
  const int n = static_cast<int>(link_units.size());
  for (int i = 0; i < n; ++i) {
    if (static_cast<int>(link_units[i].size()) != n)
      throw std::invalid_argument("intra_node_rings: the link-unit matrix must be square");
    for (int j = 0; j < n; ++j)
      if (link_units[i][j] < 0 || link_units[i][j] != link_units[j][i] ||
          (i == j && link_units[i][j] != 0))
        throw std::invalid_argument(
            "intra_node_rings: link units must be non-negative, symmetric and 0 on the diagonal "
            "(entry " +
            std::to_string(i) + "," + std::to_string(j) + ")");
  }
  if (n < 3 || n > kMaxRingSearchGpus) return {identity(std::max(n, 0))};
  std::vector<std::vector<int>> residual = link_units;
  // Cycles the units allow at most: each cycle takes two units at every GPU.
  int most = std::numeric_limits<int>::max();
  for (int i = 0; i < n; ++i) {
    long long sum = 0;
    for (int j = 0; j < n; ++j) sum += residual[i][j];
    most = static_cast<int>(std::min<long long>(most, sum / 2));
  }
  if (most > kMaxRingCycles) {
    const int f = (most + kMaxRingCycles - 1) / kMaxRingCycles;
    for (auto& row : residual)
      for (int& u : row) u = (u + f - 1) / f;
  }
  std::vector<std::vector<int>> rings;
  while (static_cast<int>(rings.size()) < 2 * kMaxRingCycles) {
    const std::vector<int> c = best_cycle(residual);
    if (c.empty()) break;
    for (int k = 0; k < n; ++k) {
      const int a = c[k], b = c[(k + 1) % n];
      --residual[a][b];
      --residual[b][a];
    }
    std::vector<int> reverse(c.size());
    reverse[0] = c[0];
    std::reverse_copy(c.begin() + 1, c.end(), reverse.begin() + 1);
    rings.push_back(c);
    rings.push_back(std::move(reverse));
  }
  if (rings.empty()) rings.push_back(identity(n));
  return rings;
}

}  // namespace scalecast::sim
