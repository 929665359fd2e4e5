// Measures an idea of issue 18 before it goes into the engine: the inter-node stage of a
// hierarchical all-reduce at flow fidelity (one ring per local GPU across the nodes, 2(N - 1)
// steps of S / (6 N) bytes), run (a) as today's engine runs it, one actor per rank with a
// mailbox put/get pair per step, or (b) by one driver actor that posts every rank's step as a
// host-to-host `Comm::sendto_async` under the same start rule (the flow r -> r + 1 of step s
// starts once ranks r and r + 1 have both finished step s - 1: sent and received step s - 1).
// Prints the simulated end (the two must agree to the last digit for (b) to replace (a)) and
// the wall and CPU time of the replay.
// Usage: bench_flow_driver NODES actors|driver [MiB]   (from the repository root)

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "platforms/platform.hpp"
#include "sim/engine_setup.hpp"
#include "sim/platform_builder.hpp"

namespace sg4 = simgrid::s4u;
using namespace scalecast;

namespace {

int token;
double last_end = 0.0;

void rank_actor(sg4::Mailbox* next, sg4::Mailbox* mine, int steps, double bytes) {
  for (int s = 0; s < steps; ++s) {
    sg4::CommPtr put = next->put_async(&token, static_cast<std::uint64_t>(bytes));
    void* got = nullptr;
    sg4::CommPtr get = mine->get_async<void>(&got);
    put->wait();
    get->wait();
  }
  last_end = std::max(last_end, sg4::Engine::get_clock());
}

// One ring of n hosts: completed[r] = steps rank r has finished (sent and received).
void driver_actor(const std::vector<std::vector<sg4::Host*>>& rings, int steps, double bytes) {
  struct Ring {
    std::vector<int> sent, received, started;
  };
  std::vector<Ring> state(rings.size());
  std::vector<sg4::CommPtr> live;
  std::vector<std::pair<int, int>> what;  // ring, sender rank
  const auto post = [&](int k, int r) {
    const int n = static_cast<int>(rings[k].size());
    live.push_back(sg4::Comm::sendto_async(rings[k][r], rings[k][(r + 1) % n],
                                           static_cast<std::uint64_t>(bytes)));
    what.push_back({k, r});
    ++state[k].started[r];
  };
  for (std::size_t k = 0; k < rings.size(); ++k) {
    const int n = static_cast<int>(rings[k].size());
    state[k].sent.assign(n, 0);
    state[k].received.assign(n, 0);
    state[k].started.assign(n, 0);
    for (int r = 0; r < n; ++r) post(static_cast<int>(k), r);
  }
  const auto done = [&](const Ring& g, int r) { return std::min(g.sent[r], g.received[r]); };
  while (!live.empty()) {
    const auto i = static_cast<std::size_t>(sg4::Comm::wait_any(live));
    const auto [k, r] = what[i];
    live[i] = live.back();
    live.pop_back();
    what[i] = what.back();
    what.pop_back();
    Ring& g = state[k];
    const int n = static_cast<int>(g.sent.size());
    const int next = (r + 1) % n;
    ++g.sent[r];
    ++g.received[next];
    // The flows that may start now: out of r, out of next, and into r (from r - 1).
    for (int x : {r, next, (r + n - 1) % n}) {
      const int t = g.started[x];  // the step flow x -> x + 1 would be
      if (t < steps && done(g, x) >= t && done(g, (x + 1) % n) >= t) post(k, x);
    }
  }
  last_end = sg4::Engine::get_clock();
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 171;
  const std::string mode = argc > 2 ? argv[2] : "actors";
  const double mib = argc > 3 ? std::atof(argv[3]) : 64.0;
  if (nodes < 2 || (mode != "actors" && mode != "driver") || mib <= 0.0) {
    std::fprintf(stderr, "usage: bench_flow_driver NODES(>= 2) actors|driver [MiB]\n");
    return 1;
  }
  constexpr int kGpus = 6;
  const platforms::Platform machine = platforms::load_platform("summit");
  auto engine = sim::create_engine({sim::NetworkMode::kCalibrated});
  sim::BuildOptions options;
  options.nodes = nodes;
  auto platform = sim::build_platform(*engine, machine, options);
  const int steps = 2 * (nodes - 1);
  const double bytes = mib * 1024 * 1024 / kGpus / nodes;
  std::vector<std::vector<sg4::Host*>> rings(kGpus);
  for (int g = 0; g < kGpus; ++g)
    for (int n = 0; n < nodes; ++n) rings[g].push_back(platform->gpu(n, g));
  if (mode == "actors") {
    for (int g = 0; g < kGpus; ++g)
      for (int n = 0; n < nodes; ++n) {
        sg4::Mailbox* next =
            sg4::Mailbox::by_name(std::to_string(g) + "/" + std::to_string((n + 1) % nodes));
        sg4::Mailbox* mine = sg4::Mailbox::by_name(std::to_string(g) + "/" + std::to_string(n));
        sg4::Actor::create("r", rings[g][n],
                           [next, mine, steps, bytes] { rank_actor(next, mine, steps, bytes); });
      }
  } else {
    sg4::Actor::create("driver", rings[0][0],
                       [&rings, steps, bytes] { driver_actor(rings, steps, bytes); });
  }
  const auto t0 = std::chrono::steady_clock::now();
  rusage r0{}, r1{};
  getrusage(RUSAGE_SELF, &r0);
  engine->run();
  getrusage(RUSAGE_SELF, &r1);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = (r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) +
                     (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) * 1e-6;
  std::printf("%d nodes x %d rings, %d steps, %s: end %.17g s | replay wall %.2f s, user %.2f s\n",
              nodes, kGpus, steps, mode.c_str(), last_end, wall, cpu);
  std::fflush(nullptr);
  std::_Exit(0);
}
