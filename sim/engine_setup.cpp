#include "sim/engine_setup.hpp"

#include <malloc.h>
#include <simgrid/s4u.hpp>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace scalecast::sim {

bool stack_guard_requested() {
  const char* v = std::getenv("SCALECAST_STACK_GUARD");
  if (v == nullptr || std::strcmp(v, "0") == 0) return false;
  if (std::strcmp(v, "1") == 0) return true;
  throw std::invalid_argument(std::string("SCALECAST_STACK_GUARD is '") + v +
                              "': expected 1 (guard pages below actor stacks) or 0");
}

std::unique_ptr<simgrid::s4u::Engine> create_engine(const EngineOptions& options) {
  // SimGrid allocates and frees a kernel object per communication: keep freed memory instead of
  // returning it to the system and faulting it in again (page faults were ~10% of a replay).
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  // No fastbins: freeing the many small kernel objects of a large run then spent its time in
  // malloc_consolidate/unlink_chunk (perf, 100,002 GPUs wave); without them 5% less CPU
  // (3 interleaved pairs, bench/README.md).
  mallopt(M_MXFAST, 0);
  std::vector<std::string> args = {"scalecast"};
  if (options.quiet) args.push_back("--log=root.thres:warning");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  auto engine = std::make_unique<simgrid::s4u::Engine>(&argc, argv.data());
  simgrid::s4u::Engine::set_config("contexts/stack-size:" + std::to_string(options.stack_kib));
  // Guard pages cost two memory maps per actor; 27,648 actors with guards exceed vm.max_map_count.
  const bool guard = options.guard_pages || stack_guard_requested();
  simgrid::s4u::Engine::set_config(std::string("contexts/guard-size:") + (guard ? "1" : "0"));
  if (options.network == NetworkMode::kIdeal) {
    simgrid::s4u::Engine::set_config("network/model:CM02");
    simgrid::s4u::Engine::set_config("network/crosstraffic:0");
  }
  return engine;
}

namespace {
// Reachable from a global, so a leak checker does not report it; SimGrid's exit handler frees
// what the engine holds.
simgrid::s4u::Engine* kept_engine = nullptr;
}  // namespace

void keep_engine_until_exit(std::unique_ptr<simgrid::s4u::Engine> engine) {
  kept_engine = engine.release();
}

}  // namespace scalecast::sim
