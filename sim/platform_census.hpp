#pragma once
// A whole-machine build with a head count: what bench_platform_build times and prints. It loads
// the platform file, creates the process's engine, builds the platform as a scenario run does,
// and resolves one route (first GPU to last GPU) so the routing zone is exercised, not just
// allocated.

#include <cstddef>
#include <string>

#include "sim/platform_builder.hpp"

namespace scalecast::sim {

struct PlatformCensus {
  std::string platform;  // its name
  int nodes = 0;
  std::size_t hosts = 0;
  std::size_t links = 0;
  std::size_t route_links = 0;  // links on the first-to-last GPU route
  double route_latency_s = 0.0;
  double load_s = 0.0;    // wall time: reading the platform file
  double engine_s = 0.0;  // wall time: creating and configuring the engine
  double build_s = 0.0;   // wall time: building the platform and resolving the route
  double cpu_s = 0.0;     // user + system CPU time of load and build (not the engine)
};

// Once per process (SimGrid allows one engine per process). `platform` is a name or a path, as
// platforms::load_platform takes it. Engine and platform teardown are not timed.
PlatformCensus build_and_census(const std::string& platform, const BuildOptions& options);

}  // namespace scalecast::sim
