#pragma once
// Internal to the CUDA backend (compiled only with SCALECAST_HAVE_CUDA): error checks that turn
// CUDA/cuDNN/cuBLAS/NCCL status codes into exceptions naming the call, device buffers, CUDA-event
// loop timing, and the backend class whose methods live in cuda_backend.cpp, cuda_conv.cpp,
// cuda_ops.cpp and cuda_nccl.cpp.

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

#include <functional>
#include <string>
#include <vector>

#include "kernels/cuda_params.hpp"
#include "kernels/kernel_backend.hpp"

namespace scalecast::kernels::cuda {

void check(cudaError_t e, const char* what);
void check(cudnnStatus_t s, const char* what);
void check(cublasStatus_t s, const char* what);
void check(ncclResult_t r, const char* what);

// Device memory, filled with small deterministic values (no NaN/denormal shortcuts).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

cudnnDataType_t cudnn_type(const std::string& name);
cudaDataType_t cuda_type(const std::string& name);
cublasComputeType_t cublas_compute(const std::string& name);

class CudaBackend : public KernelBackend {
 public:
  explicit CudaBackend(const CudaOptions& options);
  ~CudaBackend() override;
  DeviceInfo device_info() const override { return info_; }
  std::string unsupported_reason(const KernelRequest& request) const override;
  std::vector<KernelResult> measure(const KernelRequest& request) override;

 private:
  // Times `call` with CUDA events around R back-to-back launches on the backend's stream.
  TimingStats time(const std::function<void()>& call);
  std::vector<KernelResult> conv(const KernelRequest& r);
  std::vector<KernelResult> gemm(const KernelRequest& r);
  std::vector<KernelResult> memory_bound(const KernelRequest& r);
  std::vector<KernelResult> memcpy(const KernelRequest& r);
  std::vector<KernelResult> collective(const KernelRequest& r);

  CudaOptions options_;
  DeviceInfo info_;
  int device_count_ = 0;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  DeviceBuffer workspace_;
};

}  // namespace scalecast::kernels::cuda
