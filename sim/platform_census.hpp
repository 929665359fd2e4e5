#pragma once
// A whole-machine build with a head count: what bench_platform_build times and prints. It
// creates the process's engine, builds the platform as a scenario run does, and resolves one
// route (first GPU to last GPU) so the routing zone is exercised, not just allocated.

#include <cstddef>

#include "platforms/platform.hpp"
#include "sim/platform_builder.hpp"

namespace scalecast::sim {

struct PlatformCensus {
  int nodes = 0;
  std::size_t hosts = 0;
  std::size_t links = 0;
  std::size_t route_links = 0;  // links on the first-to-last GPU route
  double route_latency_s = 0.0;
  double engine_s = 0.0;     // wall time: creating and configuring the engine
  double build_s = 0.0;      // wall time: building the platform and resolving the route
  double build_cpu_s = 0.0;  // user + system CPU time of the same
};

// Once per process (SimGrid allows one engine per process).
PlatformCensus build_and_census(const platforms::Platform& platform, const BuildOptions& options);

}  // namespace scalecast::sim
