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
  // One inaccessible page below every actor stack, so an actor that outgrows its stack faults
  // instead of silently writing over the heap. Off for runs (a page mapping per actor: more than
  // ~32,000 actors exceed vm.max_map_count); on when SCALECAST_STACK_GUARD=1, which CTest sets for
  // every test, so each actor kind the tests run proves it fits its stack.
  bool guard_pages = false;
};

// The stack of a rail actor, in KiB (the inter-node stage of rail mode, one per node and NIC group:
// 33,334 at 100,002 GPUs). It only runs the inter-node ring: with guard pages it faults at 2 KiB
// and runs at 4 KiB (Summit, 200 nodes, wave), so 8 KiB keeps twice that. Against the 16 KiB of
// a rank actor: 100,002 GPUs wave 7.3-7.7 s / 1,240 MB -> 6.3-6.4 s / 980 MB (bench/README.md).
inline constexpr unsigned kRailStackKib = 8;

// SCALECAST_STACK_GUARD: unset or "0" false, "1" true; anything else throws std::invalid_argument.
bool stack_guard_requested();

// Creates the process's one SimGrid engine, configured.
std::unique_ptr<simgrid::s4u::Engine> create_engine(const EngineOptions& options);

// Keeps a finished engine alive until the process ends instead of destroying it now. SimGrid
// allows one engine per process and shuts it down at exit anyway; a process that ends with
// std::_Exit (the scalecast CLI, the benchmarks) skips that teardown, which at 100,000 GPUs
// (133k hosts, 570k links) cost 1-1.5 s. Nothing may use the engine afterwards.
void keep_engine_until_exit(std::unique_ptr<simgrid::s4u::Engine> engine);

}  // namespace scalecast::sim
