// End to end on real measurements: a small CNN's training step runs on this CPU (our own
// training loop, tests/validation/cpu_step_runner.*), writing Kineto-format traces; the same
// kernels are calibrated on the same CPU into a database; `scalecast run` simulates the matching
// scenario with that database; compare-trace's machinery compares measured with simulated.
//
// Both sides are timed on the clock of the thread doing the work (CLOCK_THREAD_CPUTIME_ID):
// the kernels' `cpu_thread_clock` calibration and the loop's CPU-clock trace. On a shared
// machine the wall clock is not a measurement of this CPU: at load 8 on 2 cores the loop's
// thread got 16% of a core, so a 60 ms step took 360 ms of wall time, while the calibration's
// 1 ms samples, medians of many, mostly escaped (-20% under load before this choice). The wall
// clock trace is still written and compared, and reported next to the gated figure.

#include <doctest/doctest.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibration/calibration_runner.hpp"
#include "calibration/database.hpp"
#include "common/atomic_file.hpp"
#include "kernels/cpu_affinity.hpp"
#include "kernels/kernel_backend.hpp"
#include "models/training_step.hpp"
#include "models/zoo.hpp"
#include "tests/validation/cpu_step_runner.hpp"
#include "validation/run_predictor.hpp"
#include "validation/trace_comparison.hpp"
#include "validation/trace_metrics.hpp"
#include "validation/trace_reader.hpp"

using namespace scalecast;

namespace {

constexpr int kBatch = 32;
constexpr const char* kModel = "models/examples/small_cnn.yaml";
constexpr const char* kDevice =
    "cpu-host";  // the catalog key of tests/validation/data/cpu-host.yaml
// Profiled loop steps: one after the warm-up steps before the calibration (the comparison drops
// the first profiled step as warm-up and takes the median of the rest), one after it, and the
// rest between calibration jobs, spread evenly, so that the loop and the kernels it is priced
// with are measured at the same times: on a shared machine this CPU's speed drifts with what
// the other core runs (memory bandwidth, shared cache), by up to 25% between runs.
constexpr int kWarmupSteps = 2;
constexpr int kProfiledSteps = 16;
constexpr double kCalibrationSample_s = 10e-3;
// Each key is measured in five rounds spread over the run (median of the rounds' medians), so
// the simulated step, a sum over keys, samples the machine's speed over the whole run as the
// loop's median step does, not at the one moment each key happened to be measured. Three rounds
// and 12 profiled steps (3 Dec 2026, other builds on the second core): errors -10.7..+7.1 %,
// standard deviation 4.7 % over 12 runs, one beyond the 10 % limit; five rounds and 16 steps:
// -7.0..+4.4 %, standard deviation 3.6 % over 10 runs, at 25 s a run instead of 15 s.
constexpr int kCalibrationRounds = 5;
// Share of its median step the loop's thread may spend descheduled before the run is skipped as
// too noisy to judge (see the check).
constexpr double kOverloaded = 0.70;
// Timed calls of each op on its own (CpuTrainingLoop::time_isolated) after each interleaved
// loop step: the kernels' warm cost at the same moments as the steps and the calibration.
constexpr int kIsolatedReps = 2;

// Ends this test process as skipped: ctest registers the engine tests with SKIP_RETURN_CODE 77
// (tests/validation/CMakeLists.txt), and the reason is the last line of the test's output.
[[noreturn]] void skip_test(const std::string& reason) {
  std::printf("SKIPPED: %s\n", reason.c_str());
  std::fflush(stdout);
  std::exit(77);
}

// The CPU backend, with one profiled loop step before some of its measurements.
class InterleavedBackend : public kernels::KernelBackend {
 public:
  InterleavedBackend(kernels::KernelBackend& inner, validation::testing::CpuTrainingLoop& loop,
                     int jobs, int steps)
      : inner_(inner), loop_(loop), jobs_(jobs), steps_(steps) {}
  kernels::DeviceInfo device_info() const override { return inner_.device_info(); }
  std::string unsupported_reason(const kernels::KernelRequest& r) const override {
    return inner_.unsupported_reason(r);
  }
  std::vector<kernels::KernelResult> measure(const kernels::KernelRequest& r) override {
    ++job_;
    const int due = (job_ * steps_ + jobs_ / 2) / jobs_;  // round(job * steps / jobs)
    if (due > done_) {
      loop_.run(0, due - done_);
      loop_.time_isolated(kIsolatedReps);
    }
    done_ = std::max(done_, due);
    return inner_.measure(r);
  }

 private:
  kernels::KernelBackend& inner_;
  validation::testing::CpuTrainingLoop& loop_;
  int jobs_, steps_, job_ = 0, done_ = 0;
};

struct Compared {
  validation::TraceMetrics measured;
  validation::TraceComparison comparison;
  double error_pct = 0.0;
};

Compared compare(const std::string& measured_path, validation::Trace simulated) {
  validation::TraceReadOptions read;
  validation::Trace measured = validation::read_trace(measured_path, read);
  Compared c;
  c.measured = validation::compute_metrics(measured, read.classifier);
  const validation::TraceMetrics s = validation::compute_metrics(simulated, read.classifier);
  c.comparison = validation::compare_metrics(c.measured, s);
  MESSAGE(measured_path << "\n" << validation::format_comparison(c.comparison, c.measured, s));
  const validation::CategoryRow& iteration = c.comparison.categories.at(0);
  REQUIRE(iteration.name == "iteration");
  c.error_pct = iteration.error_pct;
  MESSAGE("measured iteration " << iteration.measured_s * 1e3 << " ms, simulated "
                                << iteration.simulated_s * 1e3 << " ms, error "
                                << iteration.error_pct << "%");
  return c;
}

}  // namespace

TEST_SUITE("slow") {
  // Until both sides were pinned to one CPU this was may_fail: on a quiet machine runs spread
  // -12%..+24%, every op class moving together, because the loop's thread and the calibration
  // could land on different vCPUs, whose speeds differ by up to 30% here (see the pinning below).
  // Pinned (2 Dec 2026): quiet -0.1..-8.3% (25 runs), both cores busy -3.9..-5.9%, both cores
  // copying memory -1.7..-5.6%, load 8.5 -6.3..-7.8%; with the convolutions sharing one
  // workspace too, quiet +2.4..-7.8% (18 runs, median -4.9%).
  TEST_CASE(
      "CPU training loop trace versus its simulation within 10 percent or the spread of its "
      "steps") {
    const std::filesystem::path dir =
        std::filesystem::path(SCALECAST_BINARY_DIR) / "tests" / "validation" / "cpu_e2e";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    // One thread on both sides (a no-op unless Eigen was built with OpenMP), on one CPU.
    Eigen::setNbThreads(1);
    // On this 2-vCPU VM the two vCPUs run the same Eigen GEMM at speeds up to 30% apart, and
    // each vCPU's speed drifts by 20% over seconds (neighbours on the host's physical cores):
    // with the loop and the calibration free to land on different vCPUs, runs spread
    // -12%..+25%; pinned, 25 runs gave -0.1..-8.3%. The loop's and the calibration's threads
    // are started by this one, so they inherit its CPU.
    const int pinned_cpu = kernels::current_cpu();
    const kernels::CpuPin pinned(pinned_cpu);
    MESSAGE("loop and calibration pinned to CPU " << pinned_cpu);

    models::StepOptions step_options;
    step_options.batch = kBatch;
    step_options.precision = common::Precision::kFp32;
    const models::TrainingStep step =
        models::build_training_step(models::load_model(kModel), step_options);

    // 1. The real loop on this CPU: warm-up and the first profiled step.
    validation::testing::CpuTrainingLoop loop(step, kDevice);
    loop.run(kWarmupSteps, 1);
    loop.time_isolated(kIsolatedReps);

    // 2. Calibrate every distinct op of the step on this CPU, on the thread CPU clock, with
    // loop steps between the jobs.
    kernels::TimingOptions timing;
    timing.cpu_thread_clock = true;
    // Samples of several scheduler slices, like a loop step: on a shared core every slice
    // starts with caches refilled after another process ran, and a median over 1 ms samples
    // (each inside one slice) left that cost out (the loop read 5-11% slower at load 10).
    timing.min_sample_s = kCalibrationSample_s;
    timing.min_samples = 3;    // per round: 15 or more per key over the five rounds
    timing.max_total_s = 0.1;  // per round
    const auto cpu_backend = kernels::make_cpu_backend(timing);
    const auto jobs = calibration::jobs_for_ops(step.ops(), kDevice);
    InterleavedBackend backend(
        *cpu_backend, loop, static_cast<int>(jobs.size()) * kCalibrationRounds, kProfiledSteps - 2);
    calibration::Database db;
    calibration::RunnerOptions runner;
    runner.rounds = kCalibrationRounds;
    runner.show_progress = false;
    runner.command = "test_validation: CPU end-to-end";
    const auto report = calibration::run_calibration(backend, jobs, runner, db);
    CHECK(report.unsupported == 0);
    const std::string db_path = (dir / "cpu-host.calibration.yaml").string();
    calibration::save_database(db, db_path);

    // 3. The loop's last profiled step; both traces written.
    loop.run(0, 1);
    loop.time_isolated(kIsolatedReps);
    std::vector<double> descheduled;
    for (const auto& s : loop.steps()) {
      MESSAGE("step " << s.step << ": wall " << s.wall_s * 1e3 << " ms, thread CPU "
                      << s.cpu_s * 1e3 << " ms, descheduled " << s.descheduled_fraction() * 100
                      << "%");
      descheduled.push_back(s.descheduled_fraction());
    }
    std::sort(descheduled.begin(), descheduled.end());
    const std::string cpu_path = (dir / "measured.cpu-clock.pt.trace.json").string();
    const std::string wall_path = (dir / "measured.wall-clock.pt.trace.json").string();
    common::write_file_atomic(cpu_path, loop.cpu_trace_json());
    common::write_file_atomic(wall_path, loop.wall_trace_json());

    // 4. The matching scenario, simulated by `scalecast run` with the database.
    const std::string scenario_path = (dir / "scenario.yaml").string();
    common::write_file_atomic(
        scenario_path,
        "platform: " + std::string(SCALECAST_SOURCE_DIR) +
            "/tests/validation/data/cpu-host.yaml\n" +
            "model: " + std::string(SCALECAST_SOURCE_DIR) + "/" + kModel + "\n" +
            "precision: fp32\nbatch_per_gpu: " + std::to_string(kBatch) +
            "\nnodes: 1\ngpus_per_node: 1\niterations: 4\nwarmup: 1\ncalibration: [" + db_path +
            "]\n");
    validation::TraceReadOptions read;
    validation::RunScenarioSimulator simulator(std::string(SCALECAST_BINARY_DIR) + "/cli/scalecast",
                                               (dir / "sim").string(), read);
    const validation::Trace simulated = simulator.simulate(scenario_path);

    // 5. Compare, as `scalecast compare-trace` does: the CPU-clock trace is the gate; the
    // wall-clock one matches it on a quiet machine and is reported.
    const Compared wall = compare(wall_path, simulated);
    const Compared cpu = compare(cpu_path, simulated);
    MESSAGE("wall clock: error " << wall.error_pct << "% with the loop's thread descheduled "
                                 << descheduled[descheduled.size() / 2] * 100
                                 << "% of the median step; thread CPU clock: error "
                                 << cpu.error_pct << "%");
    CHECK(cpu.measured.iteration_count == kProfiledSteps);
    CHECK(wall.measured.iteration_count == kProfiledSteps);
    // When the loop's thread got under 30% of a core (descheduled over 70% of its median
    // step), the residual cost of sharing (cache refills after every other process's slice)
    // reached -15% in one of six runs before pinning (pinned: -6.3% at 78%): such a run
    // measures the neighbours, not this CPU, so the test is skipped (exit 77, ctest's
    // SKIP_RETURN_CODE) with the reason, never passed with a warning. At 40-50% descheduled
    // every run was within -5.1%.
    const double median_descheduled = descheduled[descheduled.size() / 2];
    if (median_descheduled > kOverloaded) {
      char reason[200];
      std::snprintf(reason, sizeof reason,
                    "machine overloaded: the loop's thread was descheduled %.1f%% of its median "
                    "step (limit %.0f%%); CPU-clock error %.2f%% not judged",
                    median_descheduled * 100, kOverloaded * 100, cpu.error_pct);
      skip_test(reason);
    }
    // The limit is 10 %, or the loop's own step-to-step spread where that is wider: this VM's
    // host lends the vCPU at speeds that move by up to 40 % within tens of milliseconds (steps
    // of one quiet run: 67-106 ms on the thread CPU clock; a probe GEMM timed around each step
    // moved as much but not in step with it, so it cannot normalise them). The simulated step is
    // a sum of per-key medians and the measured one a median of 15 steps; when the steps spread
    // wider than +-10 %, which mode each median lands in decides the error (CI, 3 Dec: a
    // failure beyond -10 % with steps of 72-104 ms; here, the other core busy: -11.1 % with
    // steps of 67-98 ms, the simulation inside them). So the gate is the larger of 10 % and half
    // the steady steps' 10th-90th percentile range over their median: a model off by more than
    // the machine's own noise still fails, and the figure used is printed.
    std::vector<double> steady;
    for (std::size_t i = 1; i < loop.steps().size(); ++i) steady.push_back(loop.steps()[i].cpu_s);
    std::sort(steady.begin(), steady.end());
    const auto rank = [&](double q) {  // nearest rank
      return steady[static_cast<std::size_t>(std::lround(q * (steady.size() - 1)))];
    };
    const double spread_pct = 100.0 * (rank(0.9) - rank(0.1)) / (2.0 * rank(0.5));
    const double limit_pct = std::max(10.0, spread_pct);
    MESSAGE("steady steps: 10th-90th percentile "
            << rank(0.1) * 1e3 << "-" << rank(0.9) * 1e3 << " ms, half-spread " << spread_pct
            << "% of the median; limit " << limit_pct << "%, CPU-clock error " << cpu.error_pct
            << "%");
    // Two parts of that error, both gated. A calibration times each kernel warm, on the buffers
    // its previous call touched; in a step an op finds its inputs where its producer left them
    // but its weights and the rest of its working set a whole step old. On a quiet host the two
    // agree within 2-3 % (7 Dec: -2.2 and -1.8 %, steps of 60 ms); on a host whose vCPU is slow
    // (steps of 86-97 ms, CI on 3 and 8 Dec, here on 5 Dec) the simulation read 10-12 % low,
    // every streaming class together (conv -5 %, elementwise -9 %, pooling -8 %): the host's other
    // tenants took cache, and a step refills what a warm kernel keeps. So the loop's own ops are
    // also timed each on its own, warm, at the same moments (time_isolated), and:
    // (a) the simulation must match that warm sum within the limit: this is what the calibration
    //     and the simulator are responsible for (a 1.3x or 0.75x calibration fails it);
    // (b) the simulation must match the loop's step within the limit, widened below by what the
    //     warm sum itself misses of the step on this host at this time (measured, never a
    //     constant), since no warm-cache calibration can see that cost. It is printed, and the
    //     note of a run on a quiet host should read (a) and (b) alike.
    const double measured_s = cpu.comparison.categories.at(0).measured_s;
    const double simulated_s = cpu.comparison.categories.at(0).simulated_s;
    const double isolated_s = loop.isolated_step_s();
    const double kernel_error_pct = 100.0 * (simulated_s - isolated_s) / isolated_s;
    const double warm_gap_pct = 100.0 * (isolated_s - measured_s) / measured_s;
    const double low_limit_pct = limit_pct + std::max(0.0, -warm_gap_pct);
    MESSAGE("ops timed each on its own, warm: "
            << isolated_s * 1e3 << " ms, " << warm_gap_pct
            << "% against the loop's step; simulated against "
               "them "
            << kernel_error_pct << "% (limit " << limit_pct << "%); simulated against the step "
            << cpu.error_pct << "% (limits -" << low_limit_pct << "%, +" << limit_pct << "%)");
    CHECK(std::abs(kernel_error_pct) <= limit_pct);
    CHECK(cpu.error_pct >= -low_limit_pct);
    CHECK(cpu.error_pct <= limit_pct);

    // 6. The same comparison through the command line: `scalecast compare-trace` on the
    // CPU-clock trace prints and writes the figure gated above (same files, deterministic
    // simulation).
    const std::string json_path = (dir / "compare-trace.json").string();
    const std::string command = std::string(SCALECAST_BINARY_DIR) +
                                "/cli/scalecast -q compare-trace " + cpu_path + " --scenario " +
                                scenario_path + " --json " + json_path + " > " +
                                (dir / "compare-trace.txt").string() + " 2>&1";
    REQUIRE(std::system(command.c_str()) == 0);
    std::ifstream json_file(json_path);
    const auto cli = nlohmann::json::parse(json_file);
    REQUIRE(cli.at("categories").at(0).at("name") == "iteration");
    const double cli_error_pct = cli["categories"][0]["error_pct"].get<double>();
    MESSAGE("scalecast compare-trace: iteration error " << cli_error_pct << "%");
    CHECK(std::abs(cli_error_pct - cpu.error_pct) <= 0.001);  // the JSON keeps 3 decimals
  }
}
