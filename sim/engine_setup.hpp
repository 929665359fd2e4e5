#pragma once
// SimGrid engine configuration shared by the CLI, the tests and the benchmarks: the network
// model (ideal CM02 without cross-traffic for analytic checks, LV08 with the platform's factors
// for prediction; docs/simgrid-notes.md "Network model") and small actor stacks so tens of
// thousands of rank actors fit in memory (docs/simgrid-notes.md "Actors"). Call before building the
// platform.

#include <memory>

#include "sim/simulated_platform.hpp"

namespace simgrid::s4u {
class Engine;
}

namespace scalecast::sim {

struct EngineOptions {
  NetworkMode network = NetworkMode::kCalibrated;
  int stack_kib = 16;  // per actor; rank actors need little
  bool quiet = true;   // silence SimGrid's own info logging
};

// Creates the process's one SimGrid engine, configured.
std::unique_ptr<simgrid::s4u::Engine> create_engine(const EngineOptions& options);

// Keeps a finished engine alive until the process ends instead of destroying it now. SimGrid
// allows one engine per process and shuts it down at exit anyway; a process that ends with
// std::_Exit (the scalecast CLI, the benchmarks) skips that teardown, which at 100,000 GPUs
// (133k hosts, 570k links) cost 1-1.5 s. Nothing may use the engine afterwards.
void keep_engine_until_exit(std::unique_ptr<simgrid::s4u::Engine> engine);

}  // namespace scalecast::sim
