#pragma once
// Test helper: one SimGrid engine per test case (SimGrid allows one engine per process and
// ctest runs each doctest case in its own process), a platform built in it, and helpers that
// move real bytes and report the simulated time.

#include <fmt/format.h>
#include <functional>
#include <memory>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Io.hpp>
#include <string>
#include <vector>

#include "platforms/platform.hpp"
#include "sim/platform_builder.hpp"

namespace scalecast::sim::testing {

inline simgrid::s4u::Engine& test_engine() {
  // Quiet SimGrid's configuration messages; the engine lives until the process exits.
  static int argc = 2;
  static char arg0[] = "scalecast_test";
  static char arg1[] = "--log=root.thres:warning";
  static char* argv[] = {arg0, arg1, nullptr};
  static simgrid::s4u::Engine engine(&argc, argv);
  return engine;
}

// Loads a platform by name (or parses `yaml` when given) and builds it.
inline std::unique_ptr<MachinePlatform> build(const platforms::Platform& p, int nodes,
                                              NetworkMode mode = NetworkMode::kIdeal) {
  BuildOptions o;
  o.nodes = nodes;
  o.network = mode;
  return build_platform(test_engine(), p, o);
}

inline platforms::Platform parse(const std::string& yaml) {
  return platforms::parse_platform(yaml, "test.yaml",
                                   std::string(SCALECAST_SOURCE_DIR) + "/platforms");
}

struct Transfer {
  simgrid::s4u::Host* src;
  simgrid::s4u::Host* dst;
  double bytes;
};

// Runs `body` in one actor on `where` and the simulation to its end.
inline void run_actor(simgrid::s4u::Host* where, std::function<void()> body) {
  simgrid::s4u::Actor::create("driver", where, std::move(body));
  test_engine().run();
}

// Each transfer alone, one after the other; returns each one's achieved bandwidth (bytes/s).
inline std::vector<double> sequential_bandwidths(const std::vector<Transfer>& transfers) {
  std::vector<double> out;
  run_actor(transfers.front().src, [&] {
    for (const auto& t : transfers) {
      const double t0 = simgrid::s4u::Engine::get_clock();
      simgrid::s4u::Comm::sendto(t.src, t.dst, static_cast<uint64_t>(t.bytes));
      out.push_back(t.bytes / (simgrid::s4u::Engine::get_clock() - t0));
    }
  });
  return out;
}

// All transfers at once; returns the time until the last one ends (s).
inline double concurrent_time(const std::vector<Transfer>& transfers) {
  double end = 0.0;
  run_actor(transfers.front().src, [&] {
    std::vector<simgrid::s4u::CommPtr> comms;
    for (const auto& t : transfers) {
      comms.push_back(
          simgrid::s4u::Comm::sendto_async(t.src, t.dst, static_cast<uint64_t>(t.bytes)));
    }
    simgrid::s4u::Comm::wait_all(comms);
    end = simgrid::s4u::Engine::get_clock();
  });
  return end;
}

}  // namespace scalecast::sim::testing
