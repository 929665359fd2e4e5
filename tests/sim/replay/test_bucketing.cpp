// Gradient bucketing as the frameworks do it (sim/bucket_plan.hpp), the framework presets and
// their scenario keys, and the fixed per-op / per-iteration host costs of the step program.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <string>
#include <vector>

#include "common/config_error.hpp"
#include "sim/bucket_plan.hpp"
#include "sim/engine_setup.hpp"
#include "sim/framework_preset.hpp"
#include "sim/job.hpp"
#include "sim/scenario.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;
using scalecast::calibration::Framework;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Backward ops each producing one gradient of the given sizes, in ready order.
StepProgram with_gradients(const std::vector<double>& bytes) {
  StepProgram p = synthetic_program(0, 0.0, static_cast<int>(bytes.size()), 1e-3, 1.0, 0.0);
  for (std::size_t g = 0; g < bytes.size(); ++g) p.gradients[g].bytes = bytes[g];
  return p;
}

std::string error_of(const std::string& text) {
  try {
    load_scenario_text(text, "b.yaml");
  } catch (const scalecast::common::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

const std::string kBase = "platform: dgx1-v100\nmodel: resnet50\nnodes: 1\n";

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("bucketing: DDP closes a bucket at its cap, the first one at 1 MiB") {
    // 0.6 + 0.6 MiB reach the 1 MiB first cap; then 10 + 10 + 10 MiB reach the 25 MiB cap
    // (exceeding it by the last tensor, as reducer.cpp does); 3 MiB are left.
    const StepProgram p =
        with_gradients({0.6 * kMiB, 0.6 * kMiB, 10 * kMiB, 10 * kMiB, 10 * kMiB, 3 * kMiB});
    AllReduceConfig ddp = framework_bucketing(Framework::kPyTorch, {});
    CHECK(ddp.bucketing == Bucketing::kDdp);
    CHECK(ddp.fusion_bytes == 25 * kMiB);
    CHECK(ddp.first_bucket_bytes == 1 * kMiB);
    CHECK(ddp.cycle_time_s == 0.0);
    const std::vector<Decision> b = static_buckets(p, ddp);
    REQUIRE(b.size() == 3);
    CHECK(b[0].first == 0);
    CHECK(b[0].last == 1);
    CHECK(b[1].first == 2);
    CHECK(b[1].last == 4);
    CHECK(b[1].bytes == doctest::Approx(30 * kMiB));
    CHECK(b[2].first == 5);
    CHECK(b[2].last == 5);
    // Horovod's fusion rule at the same limit never exceeds it: 0.6 + 0.6 + 10 + 10 MiB, then
    // 10 + 3 MiB.
    AllReduceConfig fusion;
    fusion.fusion_bytes = 25 * kMiB;
    const std::vector<Decision> f = static_buckets(p, fusion);
    REQUIRE(f.size() == 2);
    CHECK(f[0].last == 3);
    CHECK(f[1].first == 4);
    CHECK(f[1].last == 5);
    // Without a first-bucket cap every DDP bucket uses the cap: 0.6 + 0.6 + 10 + 10 + 10 MiB
    // close the first at 31.2 MiB, 3 MiB are left.
    ddp.first_bucket_bytes = 0.0;
    const std::vector<Decision> no_first = static_buckets(p, ddp);
    REQUIRE(no_first.size() == 2);
    CHECK(no_first[0].last == 4);
  }

  TEST_CASE("bucketing: TensorFlow packs cut the whole gradient into equal packs after backward") {
    const StepProgram p = with_gradients({1e6, 5e6, 2e6, 4e6});
    AllReduceConfig c;
    c.bucketing = Bucketing::kPacks;
    c.packs = 3;
    const std::vector<Decision> b = static_buckets(p, c);
    REQUIRE(b.size() == 3);
    for (const Decision& d : b) {
      CHECK(d.bytes == doctest::Approx(4e6));
      CHECK(d.last == 3);
    }
    ComputeSchedule s = compute_schedule(p);
    CHECK(s.gradient_ready_s.front() < s.gradient_ready_s.back());
    apply_handover(c, s);
    for (double r : s.gradient_ready_s) CHECK(r == s.gradient_ready_s.back());
    // Fusion without after_backward keeps each gradient's own ready time.
    ComputeSchedule own = compute_schedule(p);
    apply_handover(AllReduceConfig{}, own);
    CHECK(own.gradient_ready_s.front() < own.gradient_ready_s.back());
  }

  TEST_CASE("bucketing: framework presets follow the sources' defaults") {
    const AllReduceConfig tf = framework_bucketing(Framework::kTensorFlow, {});
    CHECK(tf.bucketing == Bucketing::kFusion);
    CHECK(tf.fusion_bytes == 64 * kMiB);
    CHECK(tf.cycle_time_s == doctest::Approx(5e-3));
    CHECK_FALSE(tf.after_backward);
    const AllReduceConfig mx = framework_bucketing(Framework::kMxnet, {});
    CHECK(mx.fusion_bytes == 64 * kMiB);
    CHECK(mx.cycle_time_s == 0.0);  // the 0.1 ms cycle is not replayed (framework_preset.cpp)
    CHECK(mx.after_backward);
    AllReduceConfig base;
    base.algorithm = Algorithm::kTree;
    base.chunks = 4;
    const AllReduceConfig none = framework_bucketing(Framework::kNone, base);
    CHECK(none.fusion_bytes == base.fusion_bytes);
    CHECK(framework_bucketing(Framework::kPyTorch, base).algorithm == Algorithm::kTree);
    CHECK(framework_bucketing(Framework::kPyTorch, base).chunks == 4);
  }

  TEST_CASE("bucketing: after_backward leaves no all-reduce under the backward pass") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 8;
    TestPlatform platform(ps);
    // 16 gradients of 8 MB, 2 ms of backward each: DDP-size buckets overlap the backward pass.
    const StepProgram p = synthetic_program(4, 2e-3, 16, 2e-3, 8e6, 1e-3);
    const auto spec = [&](const std::string& name, int first_node, bool after) {
      JobSpec s;
      s.name = name;
      for (int n = 0; n < 4; ++n) s.nodes.push_back(first_node + n);
      s.program = p;
      s.allreduce = framework_bucketing(Framework::kPyTorch, {});
      s.allreduce.algorithm = Algorithm::kRing;
      s.allreduce.after_backward = after;
      s.fidelity = Fidelity::kFlow;
      s.warmup = 1;
      s.iterations = 2;
      return s;
    };
    Job overlapped(platform, spec("overlapped", 0, false));
    Job handed_over(platform, spec("after", 4, true));
    engine->run();
    const JobResult a = overlapped.result();
    const JobResult b = handed_over.result();
    MESSAGE("overlapped: exposed " << a.breakdown.exposed_comm_s << " of " << a.comm_total_s
                                   << " s; after backward: exposed " << b.breakdown.exposed_comm_s
                                   << " of " << b.comm_total_s << " s");
    CHECK(a.breakdown.exposed_comm_s < 0.5 * a.comm_total_s);
    CHECK(b.breakdown.exposed_comm_s == doctest::Approx(b.comm_total_s).epsilon(1e-6).scale(0.0));
    CHECK(b.iteration_time_s > a.iteration_time_s);
  }

  TEST_CASE("fixed costs: ops wait for the host's dispatch, the step for the fixed time") {
    // 10 forward ops of 1 us with a 5 us dispatch: launch-bound, the last ends at 10 x 5 + 1.
    StepProgram shortops = synthetic_program(10, 1e-6, 0, 0.0, 0.0, 1e-6);
    shortops.dispatch_per_op_s = 5e-6;
    const ComputeSchedule s = compute_schedule(shortops);
    CHECK(s.backward_end_s == doctest::Approx(51e-6));
    CHECK(s.compute_busy_s == doctest::Approx(10e-6));  // the waits are not compute
    CHECK(s.optimizer_s == doctest::Approx(6e-6));      // its own pass: issued after 5 us
    // 100 us kernels: the host runs ahead, only the first op waits for its issue.
    StepProgram longops = synthetic_program(10, 100e-6, 0, 0.0, 0.0, 0.0);
    longops.dispatch_per_op_s = 5e-6;
    CHECK(compute_schedule(longops).backward_end_s == doctest::Approx(1005e-6));
    // The fixed per-iteration time shifts the whole step.
    longops.fixed_per_iteration_s = 20e-6;
    const ComputeSchedule f = compute_schedule(longops);
    CHECK(f.backward_end_s == doctest::Approx(1025e-6));
    CHECK(f.fixed_s == doctest::Approx(20e-6));
    CHECK(f.op_start_s.front() == doctest::Approx(25e-6));
    // Without fixed costs nothing moves (bit-identical schedules).
    const StepProgram plain = synthetic_program(10, 100e-6, 0, 0.0, 0.0, 0.0);
    double sum = 0.0;
    for (int i = 0; i < 10; ++i) sum += 100e-6;
    CHECK(compute_schedule(plain).backward_end_s == sum);
    longops.dispatch_per_op_s = -1e-6;
    CHECK_THROWS_AS(compute_schedule(longops), std::invalid_argument);
  }

  TEST_CASE("fixed costs: the fixed time is its own breakdown term, not compute") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 2;
    TestPlatform platform(ps);
    const auto spec = [&](const std::string& name, int node, double fixed) {
      JobSpec s;
      s.name = name;
      s.nodes = {node};
      s.program = synthetic_program(4, 1e-3, 4, 1e-3, 1e6, 1e-3);
      s.program.fixed_per_iteration_s = fixed;
      s.warmup = 1;
      s.iterations = 2;
      return s;
    };
    Job plain(platform, spec("plain", 0, 0.0));
    Job fixed(platform, spec("fixed", 1, 2e-3));
    engine->run();
    const JobResult a = plain.result();
    const JobResult b = fixed.result();
    MESSAGE("plain " << a.iteration_time_s << " s, with 2 ms fixed " << b.iteration_time_s
                     << " s (fixed " << b.breakdown.fixed_s << ", compute " << b.breakdown.compute_s
                     << ")");
    CHECK(a.breakdown.fixed_s == 0.0);
    CHECK(b.breakdown.fixed_s == doctest::Approx(2e-3));
    CHECK(b.breakdown.compute_s == doctest::Approx(a.breakdown.compute_s));
    CHECK(b.iteration_time_s == doctest::Approx(a.iteration_time_s + 2e-3));
    const Breakdown& k = b.breakdown;
    CHECK(k.compute_s + k.fixed_s + k.exposed_comm_s + k.copy_s + k.io_stall_s + k.idle_s ==
          doctest::Approx(b.iteration_time_s));
  }

  TEST_CASE("bucketing: scenario framework sets defaults, allreduce keys override them") {
    const Scenario py = load_scenario_text(kBase + "framework: pytorch\n", "b.yaml");
    CHECK(py.framework == Framework::kPyTorch);
    CHECK(py.allreduce.bucketing == Bucketing::kDdp);
    CHECK(py.allreduce.fusion_bytes == 25 * kMiB);
    CHECK(py.fixed_costs.dispatch_per_op_s ==
          doctest::Approx(scalecast::calibration::kPyTorchEagerDispatch_s));
    const Scenario over = load_scenario_text(
        kBase +
            "framework: pytorch\nallreduce:\n  fusion_buffer: 50MiB\n  first_bucket: 0B\n"
            "fixed_costs:\n  dispatch_per_op: 10us\n  per_iteration: 1ms\n",
        "b.yaml");
    CHECK(over.allreduce.fusion_bytes == 50 * kMiB);
    CHECK(over.allreduce.first_bucket_bytes == 0.0);
    CHECK(over.fixed_costs.dispatch_per_op_s == doctest::Approx(10e-6));
    CHECK(over.fixed_costs.per_iteration_s == doctest::Approx(1e-3));
    // A Horovod framework switched to packs drops its cycle.
    const Scenario packs = load_scenario_text(
        kBase + "framework: tensorflow\nallreduce:\n  bucketing: packs\n  packs: 2\n", "b.yaml");
    CHECK(packs.allreduce.bucketing == Bucketing::kPacks);
    CHECK(packs.allreduce.packs == 2);
    CHECK(packs.allreduce.cycle_time_s == 0.0);
    // No framework: the engine's defaults, no fixed costs.
    const Scenario none = load_scenario_text(kBase, "b.yaml");
    CHECK(none.framework == Framework::kNone);
    CHECK(none.allreduce.bucketing == Bucketing::kFusion);
    CHECK(none.allreduce.fusion_bytes == 64 * kMiB);
    CHECK(none.fixed_costs.dispatch_per_op_s == 0.0);
  }

  TEST_CASE("bucketing: bad framework, allreduce and fixed_costs keys are precise errors") {
    const std::string fw = error_of(kBase + "framework: jax\n");
    INFO(fw);
    CHECK(fw.find("b.yaml:4:12: error: framework: expected one of pytorch, tensorflow, mxnet, "
                  "none, got \"jax\"") != std::string::npos);
    const std::string first = error_of(kBase + "allreduce:\n  first_bucket: 1MiB\n");
    INFO(first);
    CHECK(first.find("b.yaml:5:17: error: allreduce.first_bucket: expected only with "
                     "bucketing: ddp") != std::string::npos);
    const std::string cycle = error_of(kBase + "allreduce:\n  bucketing: ddp\n  cycle_time: 5ms\n");
    INFO(cycle);
    CHECK(cycle.find("b.yaml:6:15: error: allreduce.cycle_time: expected 0 with bucketing ddp") !=
          std::string::npos);
    // A cycle below 1 us is refused: 4.9e-324 s made the tick arithmetic infinite and SimGrid
    // abort ("duration is not finite"), found by the CLI fuzz test with seed 20261205.
    for (const char* tiny : {"4.9e-324s", "0.5us"}) {
      const std::string t =
          error_of(kBase + "allreduce:\n  bucketing: fusion\n  cycle_time: " + tiny + "\n");
      INFO(t);
      CHECK(t.find("allreduce.cycle_time: expected 0 (no cycle: static buckets) or a cycle of at "
                   "least 1 us, got \"" +
                   std::string(tiny) + "\"") != std::string::npos);
    }
    CHECK(error_of(kBase + "allreduce:\n  bucketing: fusion\n  cycle_time: 1us\n") == "no error");
    // The cycle's phase: stratified or a fraction in [0, 1), and only with a cycle.
    for (const char* bad : {"1", "-0.1", "1.5", "nan", "half", ".inf"}) {
      const std::string t =
          error_of(kBase + "framework: tensorflow\nallreduce:\n  cycle_phase: " + bad + "\n");
      INFO(t);
      CHECK(t.find("b.yaml:6:16: error: allreduce.cycle_phase: expected stratified or a fraction "
                   "of the cycle from 0 up to (not including) 1") != std::string::npos);
    }
    for (const std::string& no_cycle :
         {std::string("framework: pytorch\n"), std::string("allreduce:\n  cycle_time: 0ms\n")}) {
      const std::string t =
          error_of(kBase + no_cycle + (no_cycle.rfind("allreduce", 0) == 0 ? "" : "allreduce:\n") +
                   "  cycle_phase: 0.5\n");
      INFO(t);
      CHECK(t.find("allreduce.cycle_phase: expected only with a Horovod cycle") !=
            std::string::npos);
    }
    CHECK(!load_scenario_text(kBase + "framework: tensorflow\n", "b.yaml").allreduce.cycle_phase);
    CHECK(load_scenario_text(kBase + "framework: tensorflow\nallreduce:\n  cycle_phase: 0\n",
                             "b.yaml")
              .allreduce.cycle_phase == 0.0);
    CHECK(!load_scenario_text(
               kBase + "framework: tensorflow\nallreduce:\n  cycle_phase: stratified\n", "b.yaml")
               .allreduce.cycle_phase);
    const std::string packs = error_of(kBase + "allreduce:\n  bucketing: packs\n  packs: 0\n");
    INFO(packs);
    CHECK(packs.find(
              "allreduce.packs: expected at least 1 (a whole number from 1 to 1,024), got 0") !=
          std::string::npos);
    const std::string rule = error_of(kBase + "allreduce:\n  bucketing: layers\n");
    CHECK(rule.find("expected one of fusion, ddp, packs") != std::string::npos);
    const std::string neg = error_of(kBase + "fixed_costs:\n  dispatch_per_op: -2us\n");
    INFO(neg);
    CHECK(neg.find("b.yaml:5:20: error: fixed_costs.dispatch_per_op: expected a non-negative "
                   "time") != std::string::npos);
    CHECK(error_of(kBase + "fixed_costs:\n  per_step: 1ms\n").find("fixed_costs.per_step") !=
          std::string::npos);
  }
}
