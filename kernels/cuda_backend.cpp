// The CUDA backend: device set-up, provenance, CUDA-event timing and dispatch. Compiled only
// with SCALECAST_HAVE_CUDA (cmake/ScalecastCuda.cmake), into the module libscalecast_cuda.so
// that kernels/cuda_loader.cpp opens on first use; its one exported symbol is the factory below.

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>
#include <vector>

#include "kernels/cuda_support.hpp"

namespace scalecast::kernels {

namespace cuda {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(fmt::format("cuda: {} failed: {}", what, cudaGetErrorString(e)));
}
void check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(fmt::format("cudnn: {} failed: {}", what, cudnnGetErrorString(s)));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(
        fmt::format("cublas: {} failed: status {}", what, static_cast<int>(s)));
}
void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess)
    throw std::runtime_error(fmt::format("nccl: {} failed: {}", what, ncclGetErrorString(r)));
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  check(cudaMalloc(&ptr_, bytes), "cudaMalloc");
  // 0x3c3c bytes: 1.0e-2-ish halves and ~0.0115 floats, finite in every dtype.
  check(cudaMemset(ptr_, 0x3c, bytes), "cudaMemset");
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
  }
  return *this;
}

cudnnDataType_t cudnn_type(const std::string& n) {
  if (n == "half") return CUDNN_DATA_HALF;
  if (n == "bfloat16") return CUDNN_DATA_BFLOAT16;
  if (n == "double") return CUDNN_DATA_DOUBLE;
  return CUDNN_DATA_FLOAT;
}

cudaDataType_t cuda_type(const std::string& n) {
  if (n == "CUDA_R_16F") return CUDA_R_16F;
  if (n == "CUDA_R_16BF") return CUDA_R_16BF;
  if (n == "CUDA_R_64F") return CUDA_R_64F;
  return CUDA_R_32F;
}

cublasComputeType_t cublas_compute(const std::string& n) {
  if (n == "CUBLAS_COMPUTE_32F_FAST_TF32") return CUBLAS_COMPUTE_32F_FAST_TF32;
  if (n == "CUBLAS_COMPUTE_32F_PEDANTIC") return CUBLAS_COMPUTE_32F_PEDANTIC;
  if (n == "CUBLAS_COMPUTE_64F") return CUBLAS_COMPUTE_64F;
  return CUBLAS_COMPUTE_32F;
}

CudaBackend::CudaBackend(const CudaOptions& options) : options_(options) {
  const cudaError_t e = cudaGetDeviceCount(&device_count_);
  if (e != cudaSuccess || device_count_ == 0)
    throw std::runtime_error(fmt::format("cuda: no GPU visible ({})",
                                         e == cudaSuccess ? "0 devices" : cudaGetErrorString(e)));
  if (options.device < 0 || options.device >= device_count_)
    throw std::runtime_error(
        fmt::format("cuda: device {} requested, {} visible", options.device, device_count_));
  check(cudaSetDevice(options.device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, options.device), "cudaGetDeviceProperties");
  check(cudaStreamCreate(&stream_), "cudaStreamCreate");
  check(cudnnCreate(&cudnn_), "cudnnCreate");
  check(cudnnSetStream(cudnn_, stream_), "cudnnSetStream");
  check(cublasCreate(&cublas_), "cublasCreate");
  check(cublasSetStream(cublas_, stream_), "cublasSetStream");
  check(cudaEventCreate(&start_), "cudaEventCreate");
  check(cudaEventCreate(&stop_), "cudaEventCreate");
  workspace_ = DeviceBuffer(static_cast<std::size_t>(options.workspace_cap_bytes));

  int driver = 0, runtime = 0, cublas_v = 0, nccl_v = 0, clock_khz = 0, mem_clock_khz = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cublasGetVersion(cublas_, &cublas_v);
  ncclGetVersion(&nccl_v);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, options.device);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, options.device);
  info_.backend = "cuda";
  info_.name = prop.name;
  info_.key = catalog_key_for_gpu(prop.name, static_cast<double>(prop.totalGlobalMem));
  if (info_.key.empty()) info_.key = "unknown-gpu";
  info_.driver = cuda_version_string(driver);
  info_.libraries = {
      {"cuda_runtime", cuda_version_string(runtime)},
      {"cudnn", cudnn_version_string(static_cast<std::int64_t>(cudnnGetVersion()))},
      {"cublas", fmt::format("{}.{}.{}", cublas_v / 10000, cublas_v / 100 % 100, cublas_v % 100)},
      {"nccl", nccl_version_string(nccl_v)}};
  info_.properties = {{"sm_count", std::to_string(prop.multiProcessorCount)},
                      {"compute_capability", fmt::format("{}.{}", prop.major, prop.minor)},
                      {"clock_mhz", std::to_string(clock_khz / 1000)},
                      {"memory_clock_mhz", std::to_string(mem_clock_khz / 1000)},
                      {"memory_bytes", std::to_string(prop.totalGlobalMem)},
                      {"visible_gpus", std::to_string(device_count_)},
                      {"workspace_cap_bytes", std::to_string(options.workspace_cap_bytes)}};
  info_.device_count = device_count_;
}

CudaBackend::~CudaBackend() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (cublas_) cublasDestroy(cublas_);
  if (cudnn_) cudnnDestroy(cudnn_);
  if (stream_) cudaStreamDestroy(stream_);
}

std::string CudaBackend::unsupported_reason(const KernelRequest& r) const {
  if (r.dtype == common::DType::kFp8) return "fp8 kernels are not measured (need cublasLt scaling)";
  if (r.kind == KernelKind::kFileRead) return "file reads are measured by the cpu backend";
  if (r.kind == KernelKind::kMemcpy && r.direction == CopyDirection::kPeerToPeer &&
      device_count_ < 2)
    return fmt::format("peer-to-peer copies need two or more GPUs ({} visible)", device_count_);
  if (r.kind == KernelKind::kCollective && device_count_ < 2)
    return fmt::format("NCCL collectives need two or more GPUs ({} visible); skipped",
                       device_count_);
  return "";
}

TimingStats CudaBackend::time(const std::function<void()>& call) {
  return time_until_stable(
      [&](int reps) {
        check(cudaEventRecord(start_, stream_), "cudaEventRecord");
        for (int i = 0; i < reps; ++i) call();
        check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
        check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
        float ms = 0.0f;
        check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
        return static_cast<double>(ms) * 1e-3;
      },
      options_.timing);
}

std::vector<KernelResult> CudaBackend::measure(const KernelRequest& r) {
  if (const auto why = unsupported_reason(r); !why.empty())
    throw std::invalid_argument(fmt::format("cuda: cannot measure {}: {}", describe(r), why));
  check(cudaSetDevice(options_.device), "cudaSetDevice");
  switch (r.kind) {
    case KernelKind::kConv:
      return conv(r);
    case KernelKind::kGemm:
      return gemm(r);
    case KernelKind::kMemcpy:
      return memcpy(r);
    case KernelKind::kCollective:
      return collective(r);
    case KernelKind::kElementwise:
    case KernelKind::kNormalization:
    case KernelKind::kPooling:
    case KernelKind::kSoftmax:
      return memory_bound(r);
    case KernelKind::kFileRead:
      break;
  }
  throw std::invalid_argument(fmt::format("cuda: cannot measure {}", describe(r)));
}

std::vector<KernelResult> CudaBackend::memcpy(const KernelRequest& r) {
  const auto bytes = static_cast<std::size_t>(r.size_bytes);
  DeviceBuffer dst(bytes), src(bytes);
  void* host = nullptr;
  check(cudaMallocHost(&host, bytes), "cudaMallocHost");  // pinned, as data loaders use
  std::function<void()> call;
  DeviceBuffer peer;
  int peer_dev = (options_.device + 1) % std::max(device_count_, 1);
  switch (r.direction) {
    case CopyDirection::kHostToDevice:
      call = [&] { cudaMemcpyAsync(dst.get(), host, bytes, cudaMemcpyHostToDevice, stream_); };
      break;
    case CopyDirection::kDeviceToHost:
      call = [&] { cudaMemcpyAsync(host, src.get(), bytes, cudaMemcpyDeviceToHost, stream_); };
      break;
    case CopyDirection::kDeviceToDevice:
      call = [&] {
        cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream_);
      };
      break;
    case CopyDirection::kPeerToPeer: {
      check(cudaSetDevice(peer_dev), "cudaSetDevice(peer)");
      peer = DeviceBuffer(bytes);
      check(cudaSetDevice(options_.device), "cudaSetDevice");
      int can = 0;
      cudaDeviceCanAccessPeer(&can, options_.device, peer_dev);
      if (can) cudaDeviceEnablePeerAccess(peer_dev, 0);  // already-enabled is not an error here
      cudaGetLastError();
      call = [&] {
        cudaMemcpyPeerAsync(peer.get(), peer_dev, src.get(), options_.device, bytes, stream_);
      };
      break;
    }
    case CopyDirection::kHostToHost:
      call = [&] { cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDefault, stream_); };
      break;
  }
  KernelResult res;
  res.selection = "fixed";
  res.algorithm = fmt::format("cudaMemcpyAsync {}", to_string(r.direction));
  try {
    res.timing = time(call);
  } catch (...) {
    cudaFreeHost(host);
    throw;
  }
  cudaFreeHost(host);
  check(cudaGetLastError(), "cudaMemcpyAsync");
  return {res};
}

}  // namespace cuda
}  // namespace scalecast::kernels

// The module's entry point (kernels/cuda_loader.cpp): a new backend, or nullptr with the
// exception's message in `error` (nothing is thrown across the dlopen boundary).
extern "C" __attribute__((visibility("default"))) scalecast::kernels::KernelBackend*
scalecast_cuda_backend_create(const scalecast::kernels::CudaOptions* options, char* error,
                              std::size_t error_size) {
  try {
    return new scalecast::kernels::cuda::CudaBackend(*options);
  } catch (const std::exception& e) {
    std::snprintf(error, error_size, "%s", e.what());
  } catch (...) {
    std::snprintf(error, error_size, "%s", "cuda: unknown error creating the backend");
  }
  return nullptr;
}
