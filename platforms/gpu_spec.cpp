#include "platforms/gpu_spec.hpp"

namespace scalecast::platforms {

double GpuSpec::peak_flops(common::DType dtype, bool tensor_core) const {
  using common::DType;
  switch (dtype) {
    case DType::kFp64:
      return fp64_flops;
    case DType::kFp32:
      return fp32_flops;
    case DType::kTf32:
      return tensor_core && tensor_tf32_flops > 0 ? tensor_tf32_flops : fp32_flops;
    case DType::kFp16:
      return tensor_core && tensor_fp16_flops > 0 ? tensor_fp16_flops : fp16_flops;
    case DType::kBf16:
      // GPUs without bf16 units (V100) emulate it at their fp32 rate.
      if (tensor_core && tensor_bf16_flops > 0) return tensor_bf16_flops;
      return fp32_flops;
    case DType::kFp8:
      return tensor_core && tensor_fp8_flops > 0 ? tensor_fp8_flops : 0.0;
  }
  return 0.0;
}

}  // namespace scalecast::platforms
