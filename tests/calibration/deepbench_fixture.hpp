#pragma once
// Test helpers: the DeepBench CSVs committed in calibration/data/deepbench/, the converted
// databases, and the V100/P100 specs (platforms/gpus.yaml's figures with their source keys,
// docs/sources.md; the platform catalog is another layer's data).

#include <string>

#include "calibration/database.hpp"
#include "platforms/gpu_spec.hpp"

namespace scalecast::calibration::testing {

inline std::string deepbench_csv_dir() {
  return std::string(SCALECAST_SOURCE_DIR) + "/calibration/data/deepbench";
}

inline std::string committed_db(const std::string& device) {
  return std::string(SCALECAST_SOURCE_DIR) + "/calibration/data/deepbench-" +
         device.substr(0, device.find('-')) + ".yaml";
}

inline Source test_source(const std::string& id, const std::string& device,
                          const std::string& date = "2026-01-01") {
  Source s;
  s.id = id;
  s.device = device;
  s.backend = "test";
  s.date = date;
  return s;
}

// V100 SXM2 [OLCF-Summit], [NV-DGX1-WP]; fp16 = 2 × fp32 [computed]: fp32 15.7 TF, fp16 31.4 TF,
// tensor fp16 125 TF, 900 GB/s, PCIe 3.
inline platforms::GpuSpec v100() {
  platforms::GpuSpec g;
  g.name = "v100-sxm2";
  g.fp64_flops = 7.8e12;
  g.fp32_flops = 15.7e12;
  g.fp16_flops = 31.4e12;
  g.tensor_fp16_flops = 125e12;
  g.memory_bytes = 16e9;
  g.memory_bandwidth = 900e9;
  g.host_link = "pcie3x16";
  return g;
}

// P100 SXM2 [tech4gamers-P100], [Toms-P100]: fp32 10.6 TF, fp16 21.2 TF, 720 GB/s.
inline platforms::GpuSpec p100() {
  platforms::GpuSpec g;
  g.name = "p100-sxm2";
  g.fp64_flops = 5.3e12;
  g.fp32_flops = 10.6e12;
  g.fp16_flops = 21.2e12;
  g.memory_bytes = 16e9;
  g.memory_bandwidth = 720e9;
  g.host_link = "pcie3x16";
  return g;
}

}  // namespace scalecast::calibration::testing
