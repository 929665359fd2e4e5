#include "sim/platform_census.hpp"

#include <sys/resource.h>

#include <chrono>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <vector>

#include "platforms/platform.hpp"
#include "sim/engine_setup.hpp"

namespace scalecast::sim {
namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double seconds_between(std::chrono::steady_clock::time_point a,
                       std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

PlatformCensus build_and_census(const std::string& platform, const BuildOptions& options) {
  using Clock = std::chrono::steady_clock;
  PlatformCensus c;
  const auto t0 = Clock::now();
  const double cpu0 = cpu_seconds();
  const platforms::Platform machine = platforms::load_platform(platform);
  const auto t1 = Clock::now();
  const double cpu1 = cpu_seconds();
  auto engine = create_engine({options.network});
  const auto t2 = Clock::now();
  const double cpu2 = cpu_seconds();
  const auto built = build_platform(*engine, machine, options);
  c.platform = machine.name;
  c.nodes = built->node_count();
  c.hosts = engine->get_host_count();
  c.links = engine->get_link_count();
  const int last = c.nodes - 1;
  std::vector<simgrid::s4u::Link*> route;
  built->gpu(0, 0)->route_to(built->gpu(last, built->gpus_per_node(last) - 1), route,
                             &c.route_latency_s);
  c.route_links = route.size();
  c.load_s = seconds_between(t0, t1);
  c.engine_s = seconds_between(t1, t2);
  c.build_s = seconds_between(t2, Clock::now());
  c.cpu_s = (cpu1 - cpu0) + (cpu_seconds() - cpu2);
  return c;
}

}  // namespace scalecast::sim
