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
  StepProgram out = p;
  out.ops.clear();
  out.gradients.clear();
  out.batch_per_gpu = p.batch_per_gpu * k;
  out.input_bytes = p.input_bytes * k;
  std::vector<std::size_t> at(p.ops.size(), 0);  // index in `out` of the latest copy of each op
  std::size_t previous_last = 0;
  bool have_previous = false;
  for (int m = 0; m < k; ++m) {
    std::size_t last = 0;
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      if (p.ops[i].optimizer) continue;
      ProgramOp op = p.ops[i];
      op.name += " [micro " + std::to_string(m + 1) + "/" + std::to_string(k) + "]";
      for (std::size_t& pred : op.preds) {
        if (pred >= i || p.ops[pred].optimizer)
          throw std::invalid_argument("gradient accumulation: op " + p.ops[i].name +
                                      " waits for a later or an optimizer op");
        pred = at[pred];
      }
      if (op.preds.empty() && have_previous) op.preds.push_back(previous_last);
      at[i] = last = out.ops.size();
      out.ops.push_back(std::move(op));
    }
    previous_last = last;
    have_previous = !out.ops.empty();
  }
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    if (!p.ops[i].optimizer) continue;
    ProgramOp op = p.ops[i];
    for (std::size_t& pred : op.preds) pred = at[pred];
    at[i] = out.ops.size();
    out.ops.push_back(std::move(op));
  }
  for (const ProgramGradient& g : p.gradients) {
    if (g.ready_after >= p.ops.size())
      throw std::invalid_argument("gradient accumulation: gradient " + g.name +
                                  " names a missing op");
    out.gradients.push_back({g.name, g.bytes, at[g.ready_after]});
  }
  return out;
}

}  // namespace scalecast::sim
