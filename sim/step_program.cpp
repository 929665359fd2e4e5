#include "sim/step_program.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace scalecast::sim {

const char* to_string(Stream s) {
  switch (s) {
    case Stream::kCompute:
      return "compute";
    case Stream::kComm:
      return "comm";
    case Stream::kCopy:
      return "copy";
    case Stream::kRead:
      return "read";
    case Stream::kDecode:
      return "decode";
  }
  return "?";
}

ComputeSchedule compute_schedule(const StepProgram& program) {
  const std::size_t n = program.ops.size();
  if (!(program.dispatch_per_op_s >= 0.0) || !(program.fixed_per_iteration_s >= 0.0))
    throw std::invalid_argument("fixed costs must be non-negative");
  ComputeSchedule s;
  s.op_start_s.assign(n, 0.0);
  s.op_end_s.assign(n, 0.0);
  s.fixed_s = program.fixed_per_iteration_s;
  // Two passes: the step's ops, then the optimizer ops from a zero origin (they start only once
  // the last all-reduce is done, which the engine decides at run time). The host issues each
  // pass's ops in order, one per dispatch_per_op_s; a GPU op starts no earlier than its issue
  // (launch-bound when kernels are shorter than the dispatch), so the host runs ahead of long
  // kernels and short ones catch up with it.
  for (int pass = 0; pass < 2; ++pass) {
    std::array<double, kTrackCount> stream_free{};
    double host_s = pass == 0 ? program.fixed_per_iteration_s : 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const ProgramOp& op = program.ops[i];
      if (op.optimizer != (pass == 1)) continue;
      host_s += program.dispatch_per_op_s;
      double start = std::max(stream_free[static_cast<int>(op.stream)], host_s);
      for (std::size_t p : op.preds) {
        if (p >= i) throw std::invalid_argument("op '" + op.name + "' waits for a later op");
        // A step op never waits for an optimizer op; an optimizer op waiting for a step op is
        // satisfied by construction (it starts after the backward pass).
        if (program.ops[p].optimizer == op.optimizer) start = std::max(start, s.op_end_s[p]);
      }
      s.op_start_s[i] = start;
      s.op_end_s[i] = start + op.duration_s;
      stream_free[static_cast<int>(op.stream)] = s.op_end_s[i];
      if (pass == 0) {
        s.backward_end_s = std::max(s.backward_end_s, s.op_end_s[i]);
        if (op.stream == Stream::kCompute) s.compute_busy_s += op.duration_s;
      } else {
        s.optimizer_s = std::max(s.optimizer_s, s.op_end_s[i]);
      }
    }
  }
  s.gradient_ready_s.reserve(program.gradients.size());
  for (const ProgramGradient& g : program.gradients) {
    if (g.ready_after >= n)
      throw std::invalid_argument("gradient '" + g.name + "' is produced by a missing op");
    s.gradient_ready_s.push_back(s.op_end_s[g.ready_after]);
  }
  return s;
}

double total_op_time_s(const StepProgram& program) {
  double t = 0.0;
  for (const ProgramOp& op : program.ops) t += op.duration_s;
  return t;
}

StepProgram accumulate_micro_batches(const StepProgram& p, int k) {
  if (k < 1)
    throw std::invalid_argument("gradient accumulation: " + std::to_string(k) +
                                " micro-batches; expected 1 or more");
  if (k == 1) return p;
  // One pass as the host and the GPU streams run it, without the iteration's fixed host time.
  StepProgram one = p;
  one.fixed_per_iteration_s = 0.0;
  const double pass_s = compute_schedule(one).backward_end_s;
  StepProgram out = p;
  out.batch_per_gpu = p.batch_per_gpu * k;
  out.input_bytes = p.input_bytes * k;
  out.ops.clear();
  out.ops.reserve(p.ops.size() + 1);
  ProgramOp earlier;
  earlier.name = "micro-batches 1-" + std::to_string(k - 1) + " of " + std::to_string(k);
  earlier.stream = Stream::kCompute;
  earlier.duration_s = (k - 1) * pass_s;
  earlier.tier = kAccumulationTier;
  out.ops.push_back(std::move(earlier));
  for (const ProgramOp& op : p.ops) {
    ProgramOp shifted = op;
    for (std::size_t& pred : shifted.preds) ++pred;
    if (shifted.preds.empty() && !shifted.optimizer) shifted.preds.push_back(0);
    out.ops.push_back(std::move(shifted));
  }
  for (ProgramGradient& g : out.gradients) ++g.ready_after;
  return out;
}

}  // namespace scalecast::sim
