// Platform-build benchmark: wall time and peak memory of loading a platform file and building
// its SimGrid model (default: all 4,608 Summit nodes). SimGrid allows one engine per process, so
// this is a plain program run once per measurement (bench/run_benchmarks.sh), not a Google
// Benchmark loop. Prints one line: platform, nodes, hosts, links, load_s, phase_s (wall time
// of load + build), phase_cpu_s (user + system CPU time of the same, robust on a loaded
// machine), engine_s (creating the engine, not in the phase), peak_rss_mb.

#include <fmt/format.h>
#include <sys/resource.h>

#include <cstdlib>
#include <string>

#include "bench/bench_environment.hpp"
#include "sim/platform_census.hpp"

int main(int argc, char** argv) {
  scalecast::bench::note_heap_setting(argv[0]);
  scalecast::sim::BuildOptions options;
  options.nodes = argc > 2 ? std::atoi(argv[2]) : 0;
  options.network = scalecast::sim::NetworkMode::kCalibrated;
  const auto c = scalecast::sim::build_and_census(argc > 1 ? argv[1] : "summit", options);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  fmt::print(
      "platform={} nodes={} hosts={} links={} route_links={} load_s={:.3f} phase_s={:.3f} "
      "phase_cpu_s={:.3f} engine_s={:.3f} peak_rss_mb={:.1f}\n",
      c.platform, c.nodes, c.hosts, c.links, c.route_links, c.load_s, c.load_s + c.build_s, c.cpu_s,
      c.engine_s, usage.ru_maxrss / 1024.0);
  return 0;
}
