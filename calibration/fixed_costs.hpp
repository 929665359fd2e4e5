#pragma once
// Per-step costs that do not scale with the batch and that no kernel measurement contains: the
// host issuing each GPU op (framework dispatch and the CUDA launch call), and a fixed host time
// per iteration (synchronisation, data hand-off). They are kept out of the fitted framework
// efficiency, which divides kernel work only (README "Fixed per-iteration costs"). The device
// side of a launch (ramp-up, drain) is the per-kernel overhead of the cost model instead.

#include <optional>
#include <string_view>

namespace scalecast::calibration {

// The training framework of a scenario, for its default bucketing and fixed costs. kNone: the
// engine's generic defaults (no fixed costs).
enum class Framework { kNone, kPyTorch, kTensorFlow, kMxnet };

std::string_view to_string(Framework f);
// "pytorch", "tensorflow", "mxnet"; "none" for kNone.
std::optional<Framework> parse_framework(std::string_view text);

struct FixedCostParams {
  // Host time to issue one GPU op (s): op k of a step cannot start on the GPU before the host
  // has issued ops 0..k, (k + 1) x this after the step's host start. 0 = never launch-bound.
  double dispatch_per_op_s = 0.0;
  // Host time per iteration before the first op is issued (s): synchronisation with the
  // previous step, data hand-off. Reported as breakdown.fixed_s.
  double per_iteration_s = 0.0;
};

// Cited defaults per framework (fixed_costs.cpp, README "Fixed per-iteration costs").
FixedCostParams default_fixed_costs(Framework f);

// PyTorch eager, one op on CUDA tensors that launches no kernel: 3.4 us of host time
// (pytorch/pytorch PR #32194, operator micro-benchmark `split_M512_N512_parts2_cuda`,
// "Forward Execution Time (us) : 3.416" on master before the PR).
inline constexpr double kPyTorchEagerDispatch_s = 3.4e-6;

}  // namespace scalecast::calibration
