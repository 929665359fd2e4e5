// Gradient accumulation (sim/step_program.hpp accumulate_micro_batches, scenario key
// `accumulation`): K forward/backward passes per iteration, one gradient exchange after the
// last, one optimizer step. Closed forms on synthetic programs and on the test platform.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/config_error.hpp"
#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "sim/scenario.hpp"
#include "sim/step_program.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;

TEST_SUITE("unit") {
  TEST_CASE("accumulation: K micro-batches run the passes in turn and keep one exchange") {
    // 2 forward ops of 1 ms, 2 backward ops of 2 ms (one gradient each), optimizer 1 ms.
    StepProgram p = synthetic_program(2, 1e-3, 2, 2e-3, 1e6, 1e-3, 32);
    p.input_bytes = 100.0;
    const StepProgram a = accumulate_micro_batches(p, 3);
    // The first two passes as one op, then the program's own ops as the last pass.
    CHECK(a.ops.size() == 1 + 4 + 1);
    CHECK(a.ops[0].name == "micro-batches 1-2 of 3");
    CHECK(a.ops[0].duration_s == doctest::Approx(2 * 6e-3));
    CHECK(a.batch_per_gpu == 96);
    CHECK(a.input_bytes == 300.0);
    REQUIRE(a.gradients.size() == 2);
    CHECK(a.ops.back().optimizer);
    CHECK(a.ops[1].preds == std::vector<std::size_t>{0});  // the last pass waits for them
    CHECK(a.gradients[0].ready_after == 3);                // the last pass's backward ops
    CHECK(a.gradients[1].ready_after == 4);
    const ComputeSchedule s = compute_schedule(a);
    CHECK(s.backward_end_s == doctest::Approx(3 * 6e-3));
    CHECK(s.gradient_ready_s[0] == doctest::Approx(2 * 6e-3 + 4e-3));
    CHECK(s.optimizer_s == doctest::Approx(1e-3));
    CHECK(s.compute_busy_s == doctest::Approx(3 * 6e-3));
    // 1 changes nothing; below 1 is an error.
    const StepProgram same = accumulate_micro_batches(p, 1);
    CHECK(same.ops.size() == p.ops.size());
    CHECK(same.batch_per_gpu == 32);
    CHECK_THROWS_AS(accumulate_micro_batches(p, 0), std::invalid_argument);
  }

  TEST_CASE("accumulation: the iteration grows by the extra passes, the exchange stays one") {
    // Two 2-node ring jobs on disjoint nodes of one engine, the same program with 1 and with 4
    // micro-batches, the all-reduce held to the end of the backward pass (after_backward): the
    // iterations differ by exactly the 3 extra forward/backward passes (3 x 6 ms), the
    // communication time and the bytes exchanged per iteration are the same, the samples per
    // iteration 4x.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 4;
    TestPlatform platform(ps);
    const auto spec = [](const std::string& name, std::vector<int> nodes, int k) {
      JobSpec s;
      s.name = name;
      s.nodes = std::move(nodes);
      s.gpus_per_node = 1;
      s.program = accumulate_micro_batches(synthetic_program(2, 1e-3, 2, 2e-3, 64e6, 1e-3), k);
      s.program.input_bytes = 0.0;
      s.allreduce.algorithm = Algorithm::kRing;
      s.allreduce.after_backward = true;
      s.fidelity = Fidelity::kFlow;
      s.warmup = 1;
      s.iterations = 2;
      return s;
    };
    Job one(platform, spec("k1", {0, 1}, 1));
    Job four(platform, spec("k4", {2, 3}, 4));
    engine->run();
    const JobResult r1 = one.result(), r4 = four.result();
    CHECK(r4.iteration_time_s - r1.iteration_time_s == doctest::Approx(3 * 6e-3).epsilon(1e-9));
    CHECK(r4.comm_total_s == doctest::Approx(r1.comm_total_s).epsilon(1e-9));
    CHECK(r4.bytes_per_iteration.at("inter_node") == r1.bytes_per_iteration.at("inter_node"));
    CHECK(r4.batch_per_gpu == 4 * r1.batch_per_gpu);
    CHECK(r4.throughput_samples_per_s ==
          doctest::Approx(4.0 * r1.batch_per_gpu * r4.gpus / r4.iteration_time_s));
  }

  TEST_CASE("accumulation: scenario key limits and where it does not apply") {
    const std::string base =
        "name: t\nplatform: summit\nmodel: resnet50\nprecision: fp16\nbatch_per_gpu: 64\n"
        "nodes: [1]\n";
    CHECK(load_scenario_text(base + "accumulation: 8\n", "a.yaml").accumulation == 8);
    CHECK(load_scenario_text(base, "a.yaml").accumulation == 1);
    for (const char* bad : {"0", "-2", "4097", "1.5", "many"}) {
      CAPTURE(bad);
      CHECK_THROWS_WITH_AS(load_scenario_text(base + "accumulation: " + bad + "\n", "a.yaml"),
                           doctest::Contains("a.yaml:7"), scalecast::common::ConfigError);
    }
  }
}
