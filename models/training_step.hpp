#pragma once
// The graph of one data-parallel training step on one GPU: forward ops, loss, backward-data and
// backward-weight ops, and the optimizer update, as a DAG (Boost.Graph), plus the gradient
// tensors in the order they become ready (reverse layer order), which is what bucketed
// all-reduce (Horovod tensor fusion, DDP buckets) sees.
//
// Contract used by calibration/ and sim/ (models/ implements it):
//   - ops() is a topological order; predecessors(i) lists the ops op i waits for;
//   - gradients() is in ready order, each naming the op after which it is ready;
//   - buckets(bytes) fuses consecutive ready gradients up to `bytes` per bucket.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/op.hpp"

namespace scalecast::models {

using OpId = std::size_t;

struct GradientTensor {
  std::string name;  // e.g. "layer4.2.conv3.weight"
  std::int64_t params = 0;
  double bytes = 0.0;    // params × bytes per element of the gradient dtype
  OpId ready_after = 0;  // the backward-weight op that produces it
};

struct GradientBucket {
  std::vector<std::size_t> tensors;  // indices into gradients()
  double bytes = 0.0;
  OpId ready_after = 0;  // the last producer among its tensors
};

}  // namespace scalecast::models
