#pragma once
// Waiting for started communications without the per-wait CPU action of Comm::wait().
//
// In SimGrid 3.32, Comm::wait() on a running communication puts a sleep action of infinite
// duration on the waiting actor's CPU, so that a host failure ends the wait
// (ActivityImpl::wait_for in src/kernel/activity/ActivityImpl.cpp, v3.32): an LMM variable in
// the CPU model created and freed per wait. Comm::wait_any() with no timeout registers the wait
// on the communication only. scalecast never fails a host, so the two end every wait at the same
// simulated time (the golden outputs are identical); a per-step ring at flow fidelity waits
// twice per step and rank, and skipping the actions saves about 4 % of its instructions
// (callgrind, bench_allreduce 510 flow; docs/simgrid-notes.md).

#include <simgrid/s4u/Comm.hpp>

#include <vector>

namespace scalecast::sim {

// Blocks until `comm`, already started, is done.
inline void wait_started(const simgrid::s4u::CommPtr& comm) {
  simgrid::s4u::Comm::wait_any({comm});
}

// Blocks until every one of `comms`, already started, is done (in order, as Comm::wait_all).
inline void wait_all_started(const std::vector<simgrid::s4u::CommPtr>& comms) {
  for (const simgrid::s4u::CommPtr& c : comms) wait_started(c);
}

}  // namespace scalecast::sim
