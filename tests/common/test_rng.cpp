#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "common/rng.hpp"

using scalecast::common::Rng;

TEST_SUITE("unit") {
  TEST_CASE("same seed gives the same stream and another seed another") {
    Rng a(42), b(42), c(43);
    std::vector<std::uint64_t> va, vb, vc;
    for (int i = 0; i < 100; ++i)
      va.push_back(a.next_u64()), vb.push_back(b.next_u64()), vc.push_back(c.next_u64());
    CHECK(va == vb);
    CHECK(va != vc);
  }

  TEST_CASE("seed 1 gives fixed bytes on every platform") {
    // xoshiro256** seeded through splitmix64(1): a change here changes every seeded output.
    Rng r(1);
    const std::uint64_t first = r.next_u64();
    Rng again(1);
    CHECK(again.next_u64() == first);
    CHECK(first == 0xb3f2af6d0fc710c5ULL);
  }

  TEST_CASE("uniform and normal moments") {
    Rng r(7);
    double sum = 0, sum2 = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
      const double x = r.normal(3.0, 2.0);
      sum += x;
      sum2 += x * x;
    }
    const double mean = sum / n;
    const double var = sum2 / n - mean * mean;
    CHECK(mean == doctest::Approx(3.0).epsilon(0.01));
    CHECK(std::sqrt(var) == doctest::Approx(2.0).epsilon(0.01));
    for (int i = 0; i < 1000; ++i) {
      const double u = r.uniform();
      CHECK((u >= 0.0 && u < 1.0));
      CHECK(r.below(6) < 6);
    }
  }

  TEST_CASE("forked streams are reproducible and independent") {
    Rng base(99);
    Rng f1 = base.fork(1), f1b = base.fork(1), f2 = base.fork(2);
    const auto x = f1.next_u64();
    CHECK(x == f1b.next_u64());
    CHECK(x != f2.next_u64());
  }
}
