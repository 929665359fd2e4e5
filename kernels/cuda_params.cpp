#include "kernels/cuda_params.hpp"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>

namespace scalecast::kernels {
namespace {

int to_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw std::invalid_argument(fmt::format("{} = {} does not fit a cuDNN/cuBLAS int", what, v));
  return static_cast<int>(v);
}

std::int64_t round_up8(std::int64_t v) { return (v + 7) / 8 * 8; }

// Strides of a packed 4-D tensor given as (N, C, H, W) dims, in NCHW or NHWC memory order.
std::array<int, 4> packed_strides(const std::array<int, 4>& d, bool nhwc) {
  if (nhwc) return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
  return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
}

}  // namespace

CudnnConvParams cudnn_conv_params(const ConvParams& conv, common::DType dtype, bool tensor_core) {
  using common::DType;
  CudnnConvParams p;
  const std::int64_t out_h = conv_output_h(conv);
  const std::int64_t out_w = conv_output_w(conv);
  if (conv.groups < 1 || conv.c % conv.groups != 0 || conv.k % conv.groups != 0)
    throw std::invalid_argument(
        fmt::format("conv: groups {} must divide C {} and K {}", conv.groups, conv.c, conv.k));
  switch (dtype) {
    case DType::kFp32:
    case DType::kTf32:
      p.data_type = "float";
      p.compute_type = "float";
      p.element_bytes = 4;
      p.tensor_op_math = dtype == DType::kTf32 && tensor_core;
      break;
    case DType::kFp64:
      p.data_type = "double";
      p.compute_type = "double";
      p.element_bytes = 8;
      break;
    case DType::kFp16:
    case DType::kBf16:
      p.data_type = dtype == DType::kFp16 ? "half" : "bfloat16";
      p.compute_type = "float";  // fp32 accumulation, as in mixed-precision training
      p.element_bytes = 2;
      p.tensor_op_math = tensor_core;
      break;
    case DType::kFp8:
      throw std::invalid_argument("conv: cuDNN's legacy convolution API has no fp8 path");
  }
  // Tensor-core convolutions want NHWC with channels padded to multiples of 8 (DeepBench's
  // USE_TENSOR_CORES path; docs/architecture.md, "Calibration" records the padded shape).
  const bool pad_channels = p.tensor_op_math && p.element_bytes == 2 && conv.groups == 1;
  p.nhwc = pad_channels;
  p.padded_c = pad_channels ? round_up8(conv.c) : conv.c;
  p.padded_k = pad_channels ? round_up8(conv.k) : conv.k;
  p.x_dims = {to_int(conv.n, "N"), to_int(p.padded_c, "C"), to_int(conv.h, "H"),
              to_int(conv.w, "W")};
  p.w_dims = {to_int(p.padded_k, "K"), to_int(p.padded_c / conv.groups, "C/groups"),
              to_int(conv.r, "R"), to_int(conv.s, "S")};
  p.y_dims = {p.x_dims[0], p.w_dims[0], to_int(out_h, "P"), to_int(out_w, "Q")};
  p.x_strides = packed_strides(p.x_dims, p.nhwc);
  p.y_strides = packed_strides(p.y_dims, p.nhwc);
  p.pad_h = to_int(conv.pad_h, "pad_h");
  p.pad_w = to_int(conv.pad_w, "pad_w");
  p.stride_h = to_int(conv.stride_h, "stride_h");
  p.stride_w = to_int(conv.stride_w, "stride_w");
  p.dilation_h = to_int(conv.dilation_h, "dilation_h");
  p.dilation_w = to_int(conv.dilation_w, "dilation_w");
  p.groups = to_int(conv.groups, "groups");
  p.x_elements = conv.n * p.padded_c * conv.h * conv.w;
  p.w_elements = p.padded_k * (p.padded_c / conv.groups) * conv.r * conv.s;
  p.y_elements = conv.n * p.padded_k * out_h * out_w;
  return p;
}

CublasGemmParams cublas_gemm_params(const GemmParams& g, common::DType dtype, bool tensor_core) {
  using common::DType;
  CublasGemmParams p;
  p.m = to_int(g.m, "M");
  p.n = to_int(g.n, "N");
  p.k = to_int(g.k, "K");
  if (p.m == 0 || p.n == 0 || p.k == 0 || g.batch < 1)
    throw std::invalid_argument(fmt::format(
        "gemm: M, N, K and batch must be positive (got {}x{}x{} b{})", g.m, g.n, g.k, g.batch));
  p.trans_a = g.trans_a;
  p.trans_b = g.trans_b;
  // Column-major: A is m×k (stored k×m when transposed), B is k×n (n×k when transposed).
  p.lda = g.trans_a ? p.k : p.m;
  p.ldb = g.trans_b ? p.n : p.k;
  p.ldc = p.m;
  p.a_elements = g.m * g.k * g.batch;
  p.b_elements = g.k * g.n * g.batch;
  p.c_elements = g.m * g.n * g.batch;
  switch (dtype) {
    case DType::kFp32:
      p.ab_type = p.c_type = "CUDA_R_32F";
      p.compute_type = "CUBLAS_COMPUTE_32F";
      break;
    case DType::kTf32:
      p.ab_type = p.c_type = "CUDA_R_32F";
      p.compute_type = tensor_core ? "CUBLAS_COMPUTE_32F_FAST_TF32" : "CUBLAS_COMPUTE_32F";
      break;
    case DType::kFp64:
      p.ab_type = p.c_type = "CUDA_R_64F";
      p.compute_type = "CUBLAS_COMPUTE_64F";
      p.ab_bytes = p.c_bytes = 8;
      break;
    case DType::kFp16:
    case DType::kBf16:
      // Mixed precision: 16-bit inputs and outputs, fp32 accumulation; without tensor cores the
      // pedantic compute type keeps cuBLAS off them.
      p.ab_type = p.c_type = dtype == DType::kFp16 ? "CUDA_R_16F" : "CUDA_R_16BF";
      p.compute_type = tensor_core ? "CUBLAS_COMPUTE_32F" : "CUBLAS_COMPUTE_32F_PEDANTIC";
      p.ab_bytes = p.c_bytes = 2;
      break;
    case DType::kFp8:
      throw std::invalid_argument("gemm: fp8 needs cublasLt with scaling factors (not measured)");
  }
  return p;
}

NcclCounts nccl_counts(CollectiveKind kind, std::int64_t size_bytes, int element_bytes, int ranks) {
  if (ranks < 1 || element_bytes < 1 || size_bytes < 0)
    throw std::invalid_argument(fmt::format(
        "nccl: need ranks >= 1 and a size >= 0 (ranks {}, size {} B)", ranks, size_bytes));
  NcclCounts c;
  const std::int64_t total = size_bytes / element_bytes;
  switch (kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kBroadcast:
      c.send_count = c.recv_count = total;
      c.bytes = total * element_bytes;
      break;
    case CollectiveKind::kAllGather:  // S = sendcount × sizeof(type) × n
      c.send_count = total / ranks;
      c.recv_count = c.send_count * ranks;
      c.bytes = c.recv_count * element_bytes;
      break;
    case CollectiveKind::kReduceScatter:  // S = recvcount × sizeof(type) × n
      c.recv_count = total / ranks;
      c.send_count = c.recv_count * ranks;
      c.bytes = c.send_count * element_bytes;
      break;
  }
  return c;
}

double nccl_bus_factor(CollectiveKind kind, int ranks) {
  if (ranks < 1) throw std::invalid_argument("nccl: ranks must be >= 1");
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (n - 1.0) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return (n - 1.0) / n;
    case CollectiveKind::kBroadcast:
      return 1.0;
  }
  return 1.0;
}

double nccl_algbw(std::int64_t size_bytes, double time_s) {
  if (time_s <= 0) throw std::invalid_argument("nccl: time must be positive");
  return static_cast<double>(size_bytes) / time_s;
}

double nccl_busbw(CollectiveKind kind, int ranks, std::int64_t size_bytes, double time_s) {
  return nccl_algbw(size_bytes, time_s) * nccl_bus_factor(kind, ranks);
}

std::string cudnn_version_string(std::int64_t v) {
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

std::string cuda_version_string(std::int64_t v) {
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::string nccl_version_string(std::int64_t v) {
  // NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after.
  if (v < 10000) return fmt::format("{}.{}.{}", v / 1000, (v / 100) % 10, v % 100);
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

std::string catalog_key_for_gpu(const std::string& name, double memory_bytes) {
  const auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("H200")) return "h200-sxm";
  if (has("H100")) return "h100-sxm5";
  if (has("A100")) return memory_bytes > 50e9 ? "a100-sxm4-80gb" : "a100-sxm4-40gb";
  if (has("V100")) return "v100-sxm2";
  if (has("P100")) return "p100-sxm2";
  if (has("K80")) return "k80-gk210";
  return "";
}

}  // namespace scalecast::kernels
