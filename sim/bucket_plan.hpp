#pragma once
// How a step's gradient tensors are grouped into all-reduce buckets before the engine replays
// them, for the bucketing rules of the frameworks (scenarios/README.md "Gradient bucketing"):
// fusion (Horovod's fusion buffer: consecutive ready tensors while the bucket stays within the
// limit), DDP (PyTorch's reducer: a bucket closes once it reaches its cap, the first bucket with
// its own smaller cap) and packs (TensorFlow's NcclAllReduce: all gradients concatenated and cut
// into N equal packs). The Horovod cycle-time coordinator (job.cpp) decides at run time and uses
// only the fusion rule here.

#include <vector>

#include "sim/collective_config.hpp"
#include "sim/step_program.hpp"

namespace scalecast::sim {

struct Decision {
  double bytes = 0.0;
  int first = 0, last = 0;  // gradient indices fused; a pack cut across tensors names the last
};

// Static buckets of `p`'s gradients (in ready order) under `c.bucketing`; a bucket is ready when
// its `last` gradient is. Empty when there are no gradients.
std::vector<Decision> static_buckets(const StepProgram& p, const AllReduceConfig& c);

// `c.after_backward` (and packs, which TensorFlow hands over once the whole gradient list
// exists): every gradient counts as ready when the last one is; otherwise unchanged.
void apply_handover(const AllReduceConfig& c, ComputeSchedule& schedule);

}  // namespace scalecast::sim
