#pragma once
// The benchmarks simulate in their own process; the CLI simulates in point processes that it
// starts with glibc's huge-page heap (common/simulation_environment.hpp). bench/run_benchmarks.sh
// gives the benchmarks the same setting; run directly without it, a benchmark says so on stderr,
// since it then measures something else than a point process does.

#include <cstdio>

#include "common/simulation_environment.hpp"

namespace scalecast::bench {

inline void note_heap_setting(const char* program) {
  if (common::has_simulation_environment()) return;
  std::fprintf(stderr,
               "%s: note: GLIBC_TUNABLES has no glibc.malloc.hugetlb, so this run's heap is not "
               "a point process's (set GLIBC_TUNABLES=glibc.malloc.hugetlb=1 as "
               "bench/run_benchmarks.sh does)\n",
               program);
}

}  // namespace scalecast::bench
