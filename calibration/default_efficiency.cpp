#include "calibration/default_efficiency.hpp"

namespace scalecast::calibration {

double default_compute_efficiency(std::string_view op, std::string_view pass, bool tensor_core) {
  // calibration.md §8 (DeepBench V100 medians, [computed] there).
  if (op == "gemm" || op == "attention") return tensor_core ? 0.80 : 0.84;
  if (op == "conv") {
    if (pass == "bwd_data") return tensor_core ? 0.20 : 0.48;
    if (pass == "bwd_filter") return tensor_core ? 0.23 : 0.43;
    return tensor_core ? 0.31 : 0.62;
  }
  return 0.62;  // Paleo PPP_comp (calibration.md §6)
}

double default_memory_efficiency() { return 0.62; }  // Paleo's PPP (calibration.md §6)

double default_link_efficiency() { return 0.72; }  // Paleo PPP_comm (calibration.md §6)

double host_link_bandwidth(std::string_view l) {
  if (l == "pcie3x16" || l == "pcie3") return 15.75e9;  // hardware.md §1 [computed]
  if (l == "pcie4x16" || l == "pcie4") return 31.5e9;
  if (l == "pcie5x16" || l == "pcie5") return 63e9;
  if (l == "nvlink2") return 50e9;  // Summit CPU–GPU: 2 bricks × 25 GB/s (hardware.md §3)
  return 0.0;
}

}  // namespace scalecast::calibration
