#pragma once
// A real CPU training loop of this project's own, for the end-to-end trace fixture: a model's
// training step (models/) executed op by op, in topological order, on a worker thread with the
// CPU kernels of kernels/ (im2col + Eigen convolution, Eigen GEMM, batch-norm, pooling, softmax,
// elementwise), each op on the same kernel request the calibration runner measures it with.
// Every op and step is timed on two clocks, the wall clock (steady_clock) and the worker thread's
// CPU clock (CLOCK_THREAD_CPUTIME_ID, the clock of kernels' `cpu_thread_clock` calibration), and
// written as Kineto-style traces (ProfilerStep#N user annotations, `kernel` events on one
// stream): one on the wall clock, as a profiler records it, one on the CPU clock, which leaves
// out the time the OS gave the core to other processes (see validation/README.md,
// "CPU end-to-end measurement").

#include <memory>
#include <string>
#include <vector>

#include "models/training_step.hpp"

namespace scalecast::validation::testing {

struct CpuStepTiming {
  int step = 0;  // the loop's step number (warm-up steps included), as in ProfilerStep#N
  double wall_s = 0.0;
  double cpu_s = 0.0;  // the worker thread's CPU time over the step
  // Share of the step's wall time the thread was not running (descheduled): 1 - cpu / wall.
  double descheduled_fraction() const { return wall_s > 0 ? 1.0 - cpu_s / wall_s : 0.0; }
};

class CpuTrainingLoop {
 public:
  // Allocates every op's buffers once (a framework's caching allocator); `device` is the
  // calibration device key of this CPU. Throws std::invalid_argument for an op with no CPU
  // kernel, or when Eigen runs several threads (the thread CPU clock would read too short).
  CpuTrainingLoop(const models::TrainingStep& step, const std::string& device);
  ~CpuTrainingLoop();
  CpuTrainingLoop(const CpuTrainingLoop&) = delete;
  CpuTrainingLoop& operator=(const CpuTrainingLoop&) = delete;

  // Runs `warmup` unrecorded steps (the profiler schedule's warm-up: caches, page faults after
  // other work) and then `profiled` recorded ones, on a fresh worker thread. Several calls
  // append to the same traces (a profiler schedule repeated), so loop steps can be interleaved
  // with other measurements.
  void run(int warmup, int profiled);

  // Times every op of the step on its own, warm: op by op, one untimed call and then `reps`
  // timed calls back to back on the same buffers (as a calibration times a kernel), on a fresh
  // worker thread and the thread CPU clock. The samples accumulate over calls, so they can be
  // interleaved with loop steps like the calibration's jobs.
  void time_isolated(int reps);
  // Sum over the ops of the median of their isolated samples: the step as the kernels cost
  // when each runs warm, before any simulation. Throws std::logic_error before time_isolated.
  double isolated_step_s() const;

  std::string wall_trace_json() const;              // Kineto-format trace of the profiled steps
  std::string cpu_trace_json() const;               // the same events, timestamps on the CPU clock
  const std::vector<CpuStepTiming>& steps() const;  // the profiled steps, in order
  std::vector<std::string> op_names() const;        // ops executed per step, in order

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace scalecast::validation::testing
