#pragma once
// The CPU backend: Eigen GEMM, im2col convolution (all three passes), elementwise, batch-norm,
// max pooling, softmax, host memcpy and sequential file read, timed with std::chrono on this
// machine. It measures fp32 only (Eigen's half type is emulated and would time the emulation).
// Samples are wall-clock by default; `TimingOptions::cpu_thread_clock` times them on the calling
// thread's CPU clock instead (single-threaded kernels; file reads always use the wall clock).

#include "kernels/kernel_backend.hpp"

namespace scalecast::kernels {

// This thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID): the clock of `cpu_thread_clock`.
double thread_cpu_time_s();

// Elementwise requests above this many elements reuse buffers of this size (element_pieces):
// 512 MiB per fp32 vector, three of them, far above any CPU cache.
inline constexpr std::int64_t kCpuElementwisePiece = std::int64_t{1} << 27;

class CpuBackend : public KernelBackend {
 public:
  // Throws std::invalid_argument for `cpu_thread_clock` with Eigen running several threads, or
  // for elementwise_piece <= 0.
  explicit CpuBackend(const TimingOptions& timing,
                      std::int64_t elementwise_piece = kCpuElementwisePiece);
  DeviceInfo device_info() const override;
  std::string unsupported_reason(const KernelRequest& request) const override;
  std::vector<KernelResult> measure(const KernelRequest& request) override;

 private:
  KernelResult time(const std::function<void()>& call, std::string algorithm,
                    bool wall_clock = false);
  TimingOptions timing_;
  std::int64_t elementwise_piece_;
};

}  // namespace scalecast::kernels
