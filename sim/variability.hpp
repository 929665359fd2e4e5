#pragma once
// Run-to-run variability of a rank's compute (scenario keys `variability.*` and `seed`): every
// iteration a rank's compute is stretched by a lognormal factor of mean 1 and coefficient of
// variation `compute_noise_cv`, and a share `straggler_fraction` of the ranks, chosen once by the
// seed, computes `straggler_slowdown` times slower. Shared by the data-parallel job (sim/job.hpp)
// and the pipeline job (sim/pipeline_job.hpp), so the same seed draws the same factor for the
// same rank and iteration in both.

#include <cstdint>

namespace scalecast::sim {

struct Variability {
  double compute_noise_cv = 0.0;
  double straggler_fraction = 0.0;
  double straggler_slowdown = 1.0;
  std::uint64_t seed = 1;

  // Whether any rank can differ from another.
  bool varied() const {
    return compute_noise_cv > 0.0 || (straggler_fraction > 0.0 && straggler_slowdown != 1.0);
  }
  // Whether `rank` is one of the persistent stragglers.
  bool straggler(int rank) const;
  // The factor stretching `rank`'s compute in `iteration` (1 without variability).
  double stretch(int rank, int iteration) const;
};

}  // namespace scalecast::sim
