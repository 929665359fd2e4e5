#include "sim/platform_census.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <vector>

#include "sim/engine_setup.hpp"

namespace scalecast::sim {

PlatformCensus build_and_census(const platforms::Platform& platform, const BuildOptions& options) {
  auto engine = create_engine({options.network});
  const auto built = build_platform(*engine, platform, options);
  PlatformCensus c;
  c.nodes = built->node_count();
  c.hosts = engine->get_host_count();
  c.links = engine->get_link_count();
  const int last = c.nodes - 1;
  std::vector<simgrid::s4u::Link*> route;
  built->gpu(0, 0)->route_to(built->gpu(last, built->gpus_per_node(last) - 1), route,
                             &c.route_latency_s);
  c.route_links = route.size();
  return c;
}

}  // namespace scalecast::sim
