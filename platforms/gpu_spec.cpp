#include "platforms/gpu_spec.hpp"

namespace scalecast::platforms {

namespace {

struct HostLink {
  std::string_view name;
  double bandwidth_Bps;
};

// PCIe per direction [computed] from lanes x rate (docs/sources.md, Conventions); Summit CPU-GPU:
// 2 NVLink 2 bricks x 25 GB/s [OLCF-Summit]; MI250X CPU-GCD Infinity Fabric 36 GB/s per direction
// (platforms/gpus.yaml).
constexpr HostLink kHostLinks[] = {
    {"pcie3x16", 15.75e9}, {"pcie3", 15.75e9}, {"pcie4x16", 31.5e9}, {"pcie4", 31.5e9},
    {"pcie5x16", 63e9},    {"pcie5", 63e9},    {"nvlink2", 50e9},    {"infinity-fabric", 36e9},
};

}  // namespace

double host_link_bandwidth(std::string_view host_link) {
  for (const HostLink& l : kHostLinks)
    if (l.name == host_link) return l.bandwidth_Bps;
  return 0.0;
}

std::vector<std::string> host_link_names() {
  std::vector<std::string> out;
  for (const HostLink& l : kHostLinks) out.emplace_back(l.name);
  return out;
}

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
