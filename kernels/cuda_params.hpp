#pragma once
// Everything the CUDA backend derives from a request before it touches a device: cuDNN tensor,
// filter and convolution descriptor parameters (dims, strides, layout, data and compute types,
// channel padding for tensor cores), cuBLAS GEMM leading dimensions and types, and NCCL element
// counts with nccl-tests' algbw/busbw conventions. Kept free of CUDA headers so it is unit-tested
// on machines without a GPU or toolkit; cuda_backend.cpp maps the names onto the enums.

#include <array>
#include <cstdint>
#include <string>

#include "kernels/kernel_request.hpp"

namespace scalecast::kernels {

// cuDNN tensors hold fewer than 2^31 elements (int dims and strides): elementwise requests above
// this many elements are timed over pieces of this size (element_pieces in kernel_request.hpp),
// 2 GiB of fp16 per buffer, four buffers.
inline constexpr std::int64_t kCudaElementwisePiece = std::int64_t{1} << 30;

struct CudnnConvParams {
  // 4-D descriptors in the order cuDNN's Nd setters take them (N, C, H, W), with strides of the
  // chosen layout; filter dims are (K, C/groups, R, S).
  std::array<int, 4> x_dims{}, x_strides{}, w_dims{}, y_dims{}, y_strides{};
  bool nhwc = false;            // tensor-core fp16/bf16 path: NHWC activations and filters
  std::string data_type;        // "float", "half", "bfloat16", "double"
  std::string compute_type;     // accumulation type of the convolution descriptor
  bool tensor_op_math = false;  // cudnnSetConvolutionMathType(CUDNN_TENSOR_OP_MATH)
  int pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int groups = 1;
  std::int64_t padded_c = 0, padded_k = 0;  // channels as timed (multiples of 8 on tensor cores)
  std::int64_t x_elements = 0, w_elements = 0, y_elements = 0;
  int element_bytes = 4;
};

// Throws std::invalid_argument for impossible geometry or a dtype cuDNN cannot convolve.
CudnnConvParams cudnn_conv_params(const ConvParams& conv, common::DType dtype, bool tensor_core);

struct CublasGemmParams {
  int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  bool trans_a = false, trans_b = false;
  std::string ab_type;       // "CUDA_R_32F", "CUDA_R_16F", "CUDA_R_16BF", "CUDA_R_64F"
  std::string c_type;        // output type
  std::string compute_type;  // "CUBLAS_COMPUTE_32F", "CUBLAS_COMPUTE_32F_FAST_TF32", ...
  std::int64_t a_elements = 0, b_elements = 0, c_elements = 0;
  int ab_bytes = 4, c_bytes = 4;
};

CublasGemmParams cublas_gemm_params(const GemmParams& gemm, common::DType dtype, bool tensor_core);

// nccl-tests conventions ([NCCL-tests-PERF]): S is always the full-vector size in bytes.
struct NcclCounts {
  std::int64_t send_count = 0;  // elements passed as count / sendcount
  std::int64_t recv_count = 0;  // elements in each rank's receive buffer
  std::int64_t bytes = 0;       // S actually used (rounded down to whole elements per rank)
};

NcclCounts nccl_counts(CollectiveKind kind, std::int64_t size_bytes, int element_bytes, int ranks);
// busbw = algbw × factor(n): all-reduce 2(n−1)/n, all-gather and reduce-scatter (n−1)/n,
// broadcast 1.
double nccl_bus_factor(CollectiveKind kind, int ranks);
double nccl_algbw(std::int64_t size_bytes, double time_s);
double nccl_busbw(CollectiveKind kind, int ranks, std::int64_t size_bytes, double time_s);

// Parses a "major.minor.patch" triple from an integer version as the CUDA libraries report it
// (cudnnGetVersion 91900 → "9.19.0", cudaDriverGetVersion 13000 → "13.0", NCCL 22809 → "2.28.9").
std::string cudnn_version_string(std::int64_t v);
std::string cuda_version_string(std::int64_t v);
std::string nccl_version_string(std::int64_t v);

// Catalog key for a device name as cudaGetDeviceProperties reports it ("NVIDIA H200" →
// "h200-sxm", "Tesla V100-SXM2-16GB" → "v100-sxm2", "NVIDIA A100-SXM4-80GB" → "a100-sxm4-80gb");
// "" when the name is not in the catalog (the caller then needs --device-key).
std::string catalog_key_for_gpu(const std::string& device_name, double memory_bytes);

}  // namespace scalecast::kernels
