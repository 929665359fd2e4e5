#include "calibration/fixed_costs.hpp"

namespace scalecast::calibration {

std::string_view to_string(Framework f) {
  switch (f) {
    case Framework::kNone:
      return "none";
    case Framework::kPyTorch:
      return "pytorch";
    case Framework::kTensorFlow:
      return "tensorflow";
    case Framework::kMxnet:
      return "mxnet";
  }
  return "?";
}

std::optional<Framework> parse_framework(std::string_view text) {
  for (Framework f :
       {Framework::kNone, Framework::kPyTorch, Framework::kTensorFlow, Framework::kMxnet})
    if (text == to_string(f)) return f;
  return std::nullopt;
}

FixedCostParams default_fixed_costs(Framework f) {
  FixedCostParams p;
  switch (f) {
    case Framework::kPyTorch:
      // Eager mode: every op goes through the Python binding and the dispatcher on the host.
      p.dispatch_per_op_s = kPyTorchEagerDispatch_s;
      break;
    case Framework::kTensorFlow:
      // Graph mode (XLA in NVIDIA's TensorFlow recipes): the executor issues ops without Python;
      // no cited per-op measurement, so none is assumed.
      break;
    case Framework::kMxnet:
      // NVIDIA's MLPerf MXNet ResNet replays the step as CUDA graphs
      // (MXNET_EXPERIMENTAL_ENABLE_CUDA_GRAPH=1 in mlcommons/training_results_v0.7
      // NVIDIA/benchmarks/resnet/implementations/mxnet/config_DGX1.sh, MXNET_ENABLE_CUDA_GRAPHS=1
      // in training_results_v3.0 .../config_DGXA100_common.sh): no per-op host issue.
      break;
    case Framework::kNone:
      break;
  }
  // No cited measurement of a per-iteration synchronisation or hand-off cost for any of them:
  // 0 unless a scenario gives fixed_costs.per_iteration.
  return p;
}

}  // namespace scalecast::calibration
