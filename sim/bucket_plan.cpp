#include "sim/bucket_plan.hpp"

#include <algorithm>

namespace scalecast::sim {

namespace {

// Horovod fusion: consecutive tensors while the bucket stays within the limit (a tensor larger
// than the limit goes alone); 0 = one bucket per tensor.
std::vector<Decision> fusion_buckets(const StepProgram& p, double fusion_bytes) {
  std::vector<Decision> out;
  for (int g = 0; g < static_cast<int>(p.gradients.size()); ++g) {
    const double b = p.gradients[g].bytes;
    if (out.empty() || fusion_bytes <= 0.0 || out.back().bytes + b > fusion_bytes)
      out.push_back({0.0, g, g});
    out.back().bytes += b;
    out.back().last = g;
  }
  return out;
}

// PyTorch DDP (torch/csrc/distributed/c10d/reducer.cpp, compute_bucket_assignment_by_size): a
// tensor is added to the open bucket, and the bucket closes once its size reaches the current
// limit, so a bucket may exceed its cap by its last tensor; the limits are
// [first_bucket_bytes, fusion_bytes] (torch/nn/parallel/distributed.py passes
// [dist._DEFAULT_FIRST_BUCKET_BYTES, bucket_cap_mb * 1024 * 1024]).
std::vector<Decision> ddp_buckets(const StepProgram& p, double first_bytes, double cap_bytes) {
  std::vector<Decision> out;
  bool open = false;
  for (int g = 0; g < static_cast<int>(p.gradients.size()); ++g) {
    if (!open) out.push_back({0.0, g, g});
    open = true;
    out.back().bytes += p.gradients[g].bytes;
    out.back().last = g;
    const double limit = out.size() == 1 && first_bytes > 0.0 ? first_bytes : cap_bytes;
    if (out.back().bytes >= limit) open = false;
  }
  return out;
}

// TensorFlow NcclAllReduce / AllReduceCrossDeviceOps(num_packs) (tensorflow/python/distribute/
// cross_device_ops.py, _ConcatAndSplitPacker): all gradients flattened into one tensor and split
// into num_packs pieces of total // num_packs elements, the last taking the remainder. Bytes
// here, so the pieces are equal.
std::vector<Decision> pack_buckets(const StepProgram& p, int packs) {
  std::vector<Decision> out;
  const int n = static_cast<int>(p.gradients.size());
  if (n == 0) return out;
  double total = 0.0;
  for (const ProgramGradient& g : p.gradients) total += g.bytes;
  for (int k = 0; k < packs; ++k) out.push_back({total / packs, 0, n - 1});
  return out;
}

}  // namespace

std::vector<Decision> static_buckets(const StepProgram& p, const AllReduceConfig& c) {
  switch (c.bucketing) {
    case Bucketing::kDdp:
      return ddp_buckets(p, c.first_bucket_bytes, c.fusion_bytes);
    case Bucketing::kPacks:
      return pack_buckets(p, std::max(1, c.packs));
    case Bucketing::kFusion:
      break;
  }
  return fusion_buckets(p, c.fusion_bytes);
}

void apply_handover(const AllReduceConfig& c, ComputeSchedule& schedule) {
  if (!c.after_backward && c.bucketing != Bucketing::kPacks) return;
  if (schedule.gradient_ready_s.empty()) return;
  const double all =
      *std::max_element(schedule.gradient_ready_s.begin(), schedule.gradient_ready_s.end());
  for (double& r : schedule.gradient_ready_s) r = all;
}

}  // namespace scalecast::sim
