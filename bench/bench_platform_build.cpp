// Platform-build benchmark: wall time and peak memory of loading a platform file and building
// its SimGrid model (default: all 4,608 Summit nodes). SimGrid allows one engine per process, so
// this is a plain program run once per measurement (bench/run_benchmarks.sh), not a Google
// Benchmark loop. Prints one line: platform, nodes, hosts, links, load_s, phase_s (wall time
// of load + build), phase_cpu_s (user + system CPU time of the same, robust on a loaded
// machine), engine_s (creating the engine, not in the phase), peak_rss_mb.

#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "platforms/platform.hpp"
#include "sim/platform_census.hpp"

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  const std::string name = argc > 1 ? argv[1] : "summit";
  const int nodes = argc > 2 ? std::atoi(argv[2]) : 0;
  const auto t0 = Clock::now();
  const double cpu0 = cpu_seconds();
  const auto platform = scalecast::platforms::load_platform(name);
  const double load_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double load_cpu_s = cpu_seconds() - cpu0;
  scalecast::sim::BuildOptions options;
  options.nodes = nodes;
  options.network = scalecast::sim::NetworkMode::kCalibrated;
  const auto census = scalecast::sim::build_and_census(platform, options);

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  fmt::print(
      "platform={} nodes={} hosts={} links={} route_links={} load_s={:.3f} phase_s={:.3f} "
      "phase_cpu_s={:.3f} engine_s={:.3f} peak_rss_mb={:.1f}\n",
      platform.name, census.nodes, census.hosts, census.links, census.route_links, load_s,
      load_s + census.build_s, load_cpu_s + census.build_cpu_s, census.engine_s,
      usage.ru_maxrss / 1024.0);
  return 0;
}
