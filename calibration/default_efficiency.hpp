#pragma once
// Datasheet-tier defaults (docs/architecture.md, "Compute costs", tier 4): the fraction of the
// datasheet peak an op class reaches when nothing was measured on the device. Values are the V100
// medians of [DeepBench] medians, computed where one exists for the class, else Paleo's 0.62.

#include <string_view>

namespace scalecast::calibration {

// Compute efficiency e_c for op `op` (measurement-key name), pass and tensor-core use.
double default_compute_efficiency(std::string_view op, std::string_view pass, bool tensor_core);
// Memory efficiency e_m for bandwidth-bound work.
double default_memory_efficiency();
// Host-link efficiency for host-device copies (Paleo's communication default 0.72).
double default_link_efficiency();
// Bytes/s per direction of a GpuSpec::host_link name ("pcie3x16", "pcie4x16", "pcie5x16",
// "nvlink2"); 0 when unknown. docs/sources.md, Conventions (PCIe) and [OLCF-Summit] (Summit's 2
// NVLink 2 bricks).
double host_link_bandwidth(std::string_view host_link);

}  // namespace scalecast::calibration
