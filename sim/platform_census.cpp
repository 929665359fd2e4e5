#include "sim/platform_census.hpp"

#include <sys/resource.h>

#include <chrono>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <vector>

#include "sim/engine_setup.hpp"

namespace scalecast::sim {
namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

PlatformCensus build_and_census(const platforms::Platform& platform, const BuildOptions& options) {
  using Clock = std::chrono::steady_clock;
  PlatformCensus c;
  const auto t0 = Clock::now();
  auto engine = create_engine({options.network});
  const auto t1 = Clock::now();
  const double cpu1 = cpu_seconds();
  const auto built = build_platform(*engine, platform, options);
  c.nodes = built->node_count();
  c.hosts = engine->get_host_count();
  c.links = engine->get_link_count();
  const int last = c.nodes - 1;
  std::vector<simgrid::s4u::Link*> route;
  built->gpu(0, 0)->route_to(built->gpu(last, built->gpus_per_node(last) - 1), route,
                             &c.route_latency_s);
  c.route_links = route.size();
  c.engine_s = std::chrono::duration<double>(t1 - t0).count();
  c.build_s = std::chrono::duration<double>(Clock::now() - t1).count();
  c.build_cpu_s = cpu_seconds() - cpu1;
  return c;
}

}  // namespace scalecast::sim
