#pragma once
// Deterministic random numbers. The standard library's distributions are implementation-defined,
// so the same seed could give different bytes with another compiler; Rng implements its own
// generator (xoshiro256**, seeded through splitmix64) and distributions, so a seed fixes every
// output bit on every platform. fork() derives independent streams (one per rank, per op class)
// so adding a consumer does not shift the numbers another consumer sees.

#include <cstdint>

namespace scalecast::common {

class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  std::uint64_t next_u64();
  double uniform();                           // [0, 1)
  double uniform(double lo, double hi);       // [lo, hi)
  std::uint64_t below(std::uint64_t bound);   // [0, bound), unbiased; bound > 0
  double normal(double mean, double stddev);  // Box-Muller
  double lognormal(double mu, double sigma);
  // An independent generator for `stream`: the same (seed, stream) always gives the same numbers.
  Rng fork(std::uint64_t stream) const;

 private:
  std::uint64_t seed_;
  std::uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace scalecast::common
