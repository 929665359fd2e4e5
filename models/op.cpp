#include "models/op.hpp"

namespace scalecast::models {

std::string_view to_string(OpClass c) {
  switch (c) {
    case OpClass::kConv:
      return "conv";
    case OpClass::kGemm:
      return "gemm";
    case OpClass::kElementwise:
      return "elementwise";
    case OpClass::kReduction:
      return "reduction";
    case OpClass::kNormalization:
      return "normalization";
    case OpClass::kPooling:
      return "pooling";
    case OpClass::kSoftmax:
      return "softmax";
    case OpClass::kEmbedding:
      return "embedding";
    case OpClass::kAttention:
      return "attention";
    case OpClass::kOptimizer:
      return "optimizer";
    case OpClass::kMemcpy:
      return "memcpy";
  }
  return "?";
}

std::string_view to_string(Pass p) {
  switch (p) {
    case Pass::kForward:
      return "forward";
    case Pass::kBackwardData:
      return "backward_data";
    case Pass::kBackwardWeight:
      return "backward_weight";
    case Pass::kLoss:
      return "loss";
    case Pass::kOptimizer:
      return "optimizer";
  }
  return "?";
}

}  // namespace scalecast::models
