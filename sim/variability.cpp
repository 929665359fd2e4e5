#include "sim/variability.hpp"

#include <cmath>

#include "common/rng.hpp"

namespace scalecast::sim {

bool Variability::straggler(int rank) const {
  if (straggler_fraction <= 0.0) return false;
  common::Rng pick =
      common::Rng(seed ^ 0x9e3779b97f4a7c15ULL).fork(static_cast<std::uint64_t>(rank));
  return pick.uniform() < straggler_fraction;
}

double Variability::stretch(int rank, int iteration) const {
  double f = 1.0;
  if (compute_noise_cv > 0.0) {
    // Lognormal with mean 1 and the given coefficient of variation.
    const double sigma = std::sqrt(std::log1p(compute_noise_cv * compute_noise_cv));
    common::Rng rng = common::Rng(seed)
                          .fork(static_cast<std::uint64_t>(rank))
                          .fork(static_cast<std::uint64_t>(iteration) + 1);
    f *= rng.lognormal(-0.5 * sigma * sigma, sigma);
  }
  if (straggler(rank)) f *= straggler_slowdown;
  return f;
}

}  // namespace scalecast::sim
