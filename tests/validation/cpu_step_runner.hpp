#pragma once
// A real CPU training loop of this project's own, for the end-to-end trace fixture: a model's
// training step (models/) executed op by op, in topological order, on a worker thread with the
// CPU kernels of kernels/ (im2col + Eigen convolution, Eigen GEMM, batch-norm, pooling, softmax,
// elementwise), each op on the same kernel request the calibration runner measures it with.
// Every op and every step is timed with steady_clock and written as a Kineto-style trace
// (ProfilerStep#N user annotations, `kernel` events on one stream).

#include <string>
#include <vector>

#include "models/training_step.hpp"

namespace scalecast::validation::testing {

struct CpuLoopResult {
  std::string trace_json;             // Kineto-format trace of all iterations
  std::vector<double> iteration_s;    // wall time of each step
  std::vector<std::string> op_names;  // ops executed per step, in order
};

// Runs `iterations` training steps; `device` is the calibration device key of this CPU.
CpuLoopResult run_cpu_training_loop(const models::TrainingStep& step, const std::string& device,
                                    int iterations);

}  // namespace scalecast::validation::testing
