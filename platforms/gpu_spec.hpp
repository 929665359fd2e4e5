#pragma once
// A GPU model from the catalog: peak arithmetic per precision, memory, and its links. Figures
// come from the platform YAML (keys cited in docs/sources.md); the cost model's datasheet tier and
// the SimGrid host speeds are derived from them.

#include <string>
#include <string_view>
#include <vector>

#include "common/precision.hpp"

namespace scalecast::platforms {

struct GpuSpec {
  std::string name;         // catalog key, e.g. "v100-sxm2"
  double fp64_flops = 0.0;  // FLOP/s, dense
  double fp32_flops = 0.0;
  double fp16_flops = 0.0;         // non-tensor fp16
  double tensor_fp16_flops = 0.0;  // tensor cores, fp16 inputs (fp32 accumulate)
  double tensor_bf16_flops = 0.0;
  double tensor_tf32_flops = 0.0;
  double tensor_fp8_flops = 0.0;
  double memory_bytes = 0.0;
  double memory_bandwidth = 0.0;  // bytes/s
  std::string nvlink_generation;  // "", "nvlink1", "nvlink2", "nvlink3", "nvlink4"
  int nvlink_links = 0;
  double nvlink_link_bandwidth = 0.0;  // bytes/s per link per direction
  std::string host_link;               // e.g. "pcie3x16", "nvlink2"
  // Streaming multiprocessors (AMD: compute units); 0 when the catalog does not say. A
  // collective's kernels hold some of them while they run (sim/README.md "Collectives hold SMs").
  int sms = 0;
  // The catalog key whose kernel measurements price this GPU: a part of the same silicon, clocks
  // and memory bandwidth (e.g. the 32 GB V100 SXM2 uses the 16 GB part's data). Empty: its own.
  std::string calibration_key;

  // The device name its kernels are looked up under in a calibration database.
  const std::string& calibration_device() const {
    return calibration_key.empty() ? name : calibration_key;
  }

  // Peak FLOP/s for an op computing in `dtype`, on tensor cores if `tensor_core` and the GPU has
  // them for that dtype; falls back to the non-tensor rate (0 when the GPU lacks the dtype).
  double peak_flops(common::DType dtype, bool tensor_core) const;
};

// Bytes/s per direction of a GpuSpec::host_link name ("pcie3x16", "pcie4x16", "pcie5x16",
// "nvlink2", "infinity-fabric"); 0 when unknown (the catalog loader rejects unknown names).
double host_link_bandwidth(std::string_view host_link);
// The names host_link_bandwidth knows, for messages.
std::vector<std::string> host_link_names();

}  // namespace scalecast::platforms
