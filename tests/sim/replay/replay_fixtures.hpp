#pragma once
// Synthetic step programs for the engine tests: a forward chain, a backward chain whose ops each
// produce one gradient tensor, and an optimizer op, with known durations and sizes.

#include <string>

#include "sim/step_program.hpp"

namespace scalecast::sim::testing {

inline StepProgram synthetic_program(int forward_ops, double forward_op_s, int backward_ops,
                                     double backward_op_s, double gradient_bytes,
                                     double optimizer_s, int batch = 32) {
  StepProgram p;
  p.batch_per_gpu = batch;
  for (int i = 0; i < forward_ops + backward_ops; ++i) {
    ProgramOp op;
    const bool fwd = i < forward_ops;
    op.name = (fwd ? "fwd" : "bwd") + std::to_string(i);
    op.duration_s = fwd ? forward_op_s : backward_op_s;
    op.tier = "test";
    if (i > 0) op.preds = {static_cast<std::size_t>(i - 1)};
    p.ops.push_back(op);
    if (!fwd) p.gradients.push_back({"grad" + std::to_string(i), gradient_bytes, p.ops.size() - 1});
  }
  ProgramOp opt;
  opt.name = "optimizer";
  opt.duration_s = optimizer_s;
  opt.tier = "test";
  opt.optimizer = true;
  p.ops.push_back(opt);
  return p;
}

// 2(n-1)/n * S/B + 2(n-1) * alpha (the ring all-reduce on one uncontended link class).
inline double ring_allreduce_s(int n, double bytes, double bandwidth, double alpha_s) {
  return 2.0 * (n - 1) / n * bytes / bandwidth + 2.0 * (n - 1) * alpha_s;
}

}  // namespace scalecast::sim::testing
