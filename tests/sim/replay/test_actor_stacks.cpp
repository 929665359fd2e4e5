// Actor stacks (sim/engine_setup.hpp): the tests run every actor with a guard page below its stack,
// so an actor kind that outgrows its stack faults in the test that runs it; the guard does fault;
// SCALECAST_STACK_GUARD takes 1 or 0 and nothing else.

#include <alloca.h>
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <simgrid/s4u.hpp>

#include <csignal>
#include <cstdlib>
#include <stdexcept>

#include "sim/engine_setup.hpp"

namespace sg4 = simgrid::s4u;

namespace {

// Runs one actor with a `stack_kib` stack that touches `touch_bytes` of it, in a child process
// with guard pages; returns the child's wait status.
int run_actor_in_child(unsigned stack_kib, int touch_bytes) {
  const pid_t pid = fork();
  if (pid == 0) {
    auto engine =
        scalecast::sim::create_engine({scalecast::sim::NetworkMode::kIdeal, 16, true, true});
    auto* zone = sg4::create_full_zone("world");
    sg4::Host* host = zone->create_host("h", 1e9);
    zone->seal();
    sg4::Actor::init("deep", host)->set_stacksize(stack_kib)->start([touch_bytes] {
      // From the top down, as a growing stack is touched: the first byte past the stack is the
      // guard page's. Touching from the bottom up wrote first a whole stack below the guard,
      // into whatever mapping lay there (heap corruption, SIGABRT, once the test binary's
      // layout changed on 7 Dec), and never reached the guard.
      volatile char* buffer = static_cast<volatile char*>(alloca(touch_bytes));
      for (int i = touch_bytes - 1; i >= 0; i -= 64) buffer[i] = 1;
      sg4::this_actor::sleep_for(1.0);
    });
    engine->run();
    std::_Exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("actor stacks: every test runs with guard pages below actor stacks") {
    // Set by CTest for every test (cmake/ScalecastTargets.cmake); without it an actor that
    // outgrows its stack would pass the tests and corrupt memory in a run.
    CHECK(scalecast::sim::stack_guard_requested());
  }

  TEST_CASE("actor stacks: an actor that outgrows its stack faults instead of writing on") {
    const int fits = run_actor_in_child(scalecast::sim::kRailStackKib, 1024);
    CHECK(WIFEXITED(fits));
    CHECK(WEXITSTATUS(fits) == 0);
    const int outgrows = run_actor_in_child(
        scalecast::sim::kRailStackKib, static_cast<int>(scalecast::sim::kRailStackKib) * 1024 * 2);
    CHECK(WIFSIGNALED(outgrows));
    CHECK(WTERMSIG(outgrows) == SIGSEGV);
  }

  TEST_CASE("actor stacks: SCALECAST_STACK_GUARD takes 1 or 0") {
    setenv("SCALECAST_STACK_GUARD", "0", 1);
    CHECK_FALSE(scalecast::sim::stack_guard_requested());
    unsetenv("SCALECAST_STACK_GUARD");
    CHECK_FALSE(scalecast::sim::stack_guard_requested());
    for (const char* bad : {"yes", "", "2", "1 "}) {
      setenv("SCALECAST_STACK_GUARD", bad, 1);
      CHECK_THROWS_AS(scalecast::sim::stack_guard_requested(), std::invalid_argument);
    }
    setenv("SCALECAST_STACK_GUARD", "1", 1);
    CHECK(scalecast::sim::stack_guard_requested());
  }
}
