#pragma once
// The CPU backend: Eigen GEMM, im2col convolution (all three passes), elementwise, batch-norm,
// max pooling, softmax, host memcpy and sequential file read, timed with std::chrono on this
// machine. It measures fp32 only (Eigen's half type is emulated and would time the emulation).

#include "kernels/kernel_backend.hpp"

namespace scalecast::kernels {

class CpuBackend : public KernelBackend {
 public:
  explicit CpuBackend(const TimingOptions& timing) : timing_(timing) {}
  DeviceInfo device_info() const override;
  std::string unsupported_reason(const KernelRequest& request) const override;
  std::vector<KernelResult> measure(const KernelRequest& request) override;

 private:
  KernelResult time(const std::function<void()>& call, std::string algorithm);
  TimingOptions timing_;
};

}  // namespace scalecast::kernels
