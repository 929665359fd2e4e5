// cuBLAS GEMM (cublasGemmEx / strided-batched, compute type from cublas_gemm_params()) and the
// memory-bound cuDNN ops: ReLU activation, spatial batch-norm (training), max pooling and
// softmax, forward and backward.

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "kernels/cuda_support.hpp"

namespace scalecast::kernels::cuda {

std::vector<KernelResult> CudaBackend::gemm(const KernelRequest& r) {
  const CublasGemmParams p = cublas_gemm_params(r.gemm, r.dtype, r.tensor_core);
  DeviceBuffer a(static_cast<std::size_t>(p.a_elements * p.ab_bytes)),
      b(static_cast<std::size_t>(p.b_elements * p.ab_bytes)),
      c(static_cast<std::size_t>(p.c_elements * p.c_bytes));
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const bool f64 = p.compute_type == "CUBLAS_COMPUTE_64F";
  const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  const cublasOperation_t ta = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cudaDataType_t abt = cuda_type(p.ab_type), ct = cuda_type(p.c_type);
  const cublasComputeType_t comp = cublas_compute(p.compute_type);
  const auto batch = static_cast<int>(r.gemm.batch);
  std::function<void()> call;
  if (batch == 1) {
    call = [&] {
      check(cublasGemmEx(cublas_, ta, tb, p.m, p.n, p.k, alpha, a.get(), abt, p.lda, b.get(), abt,
                         p.ldb, beta, c.get(), ct, p.ldc, comp, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
    };
  } else {
    const long long sa = static_cast<long long>(r.gemm.m) * r.gemm.k,
                    sb = static_cast<long long>(r.gemm.k) * r.gemm.n,
                    sc = static_cast<long long>(r.gemm.m) * r.gemm.n;
    call = [&, sa, sb, sc] {
      check(cublasGemmStridedBatchedEx(cublas_, ta, tb, p.m, p.n, p.k, alpha, a.get(), abt, p.lda,
                                       sa, b.get(), abt, p.ldb, sb, beta, c.get(), ct, p.ldc, sc,
                                       batch, comp, CUBLAS_GEMM_DEFAULT),
            "cublasGemmStridedBatchedEx");
    };
  }
  KernelResult res;
  res.selection = "heuristic";  // cuBLAS chooses its kernel by heuristics
  res.algorithm = batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx";
  res.math = p.compute_type;
  res.timing = time(call);
  return {res};
}

namespace {

struct Tensor {
  cudnnTensorDescriptor_t d = nullptr;
  Tensor(cudnnDataType_t t, int n, int c, int h, int w) {
    check(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
    check(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, t, n, c, h, w),
          "cudnnSetTensor4dDescriptor");
  }
  ~Tensor() { cudnnDestroyTensorDescriptor(d); }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
};

int as_int(std::int64_t v, const char* what) {
  if (v <= 0 || v > (std::int64_t{1} << 31) - 1)
    throw std::invalid_argument(fmt::format("cuda: {} = {} out of range", what, v));
  return static_cast<int>(v);
}

}  // namespace

std::vector<KernelResult> CudaBackend::memory_bound(const KernelRequest& r) {
  const CudnnConvParams tp =
      cudnn_conv_params({1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1},
                        r.dtype == common::DType::kTf32 ? common::DType::kFp32 : r.dtype, false);
  const cudnnDataType_t dt = cudnn_type(tp.data_type);
  const auto eb = static_cast<std::size_t>(tp.element_bytes);
  const float one = 1.0f, zero = 0.0f;
  KernelResult res;
  res.selection = "fixed";
  std::function<void()> call;
  if (r.kind == KernelKind::kPooling) {
    const auto& c = r.conv;
    const int oh = static_cast<int>(conv_output_h(c)), ow = static_cast<int>(conv_output_w(c));
    Tensor x(dt, as_int(c.n, "n"), as_int(c.c, "c"), as_int(c.h, "h"), as_int(c.w, "w"));
    Tensor y(dt, static_cast<int>(c.n), static_cast<int>(c.c), oh, ow);
    DeviceBuffer xb(static_cast<std::size_t>(c.n * c.c * c.h * c.w) * eb), dxb(xb.bytes()),
        yb(static_cast<std::size_t>(c.n * c.c) * oh * ow * eb), dyb(yb.bytes());
    cudnnPoolingDescriptor_t pool = nullptr;
    check(cudnnCreatePoolingDescriptor(&pool), "cudnnCreatePoolingDescriptor");
    check(cudnnSetPooling2dDescriptor(pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN,
                                      static_cast<int>(c.r), static_cast<int>(c.s),
                                      static_cast<int>(c.pad_h), static_cast<int>(c.pad_w),
                                      static_cast<int>(c.stride_h), static_cast<int>(c.stride_w)),
          "cudnnSetPooling2dDescriptor");
    if (!r.backward)
      call = [&] {
        check(cudnnPoolingForward(cudnn_, pool, &one, x.d, xb.get(), &zero, y.d, yb.get()),
              "cudnnPoolingForward");
      };
    else
      call = [&] {
        check(cudnnPoolingBackward(cudnn_, pool, &one, y.d, yb.get(), y.d, dyb.get(), x.d, xb.get(),
                                   &zero, x.d, dxb.get()),
              "cudnnPoolingBackward");
      };
    res.algorithm = r.backward ? "cudnnPoolingBackward(max)" : "cudnnPoolingForward(max)";
    res.timing = time(call);
    cudnnDestroyPoolingDescriptor(pool);
    return {res};
  }
  if (r.kind == KernelKind::kElementwise) {
    // cuDNN tensors hold fewer than 2^31 elements: a larger request (an LLM's whole optimizer
    // shard) is timed as consecutive calls over pieces of one reused buffer set
    // (element_pieces); a single piece keeps the 1 × C × (E/C) × 1 shape.
    const ElementPieces pieces = element_pieces(r.elements, kCudaElementwisePiece);
    const bool split = pieces.calls() > 1;
    const int channels = split ? 1 : static_cast<int>(std::max<std::int64_t>(r.channels, 1));
    const int spatial =
        split ? static_cast<int>(pieces.piece)
              : as_int(std::max<std::int64_t>(r.elements / channels, 1), "elements/channels");
    Tensor t(dt, 1, channels, spatial, 1);
    std::optional<Tensor> tail;
    if (split && pieces.tail > 0) tail.emplace(dt, 1, 1, static_cast<int>(pieces.tail), 1);
    const std::size_t bytes = static_cast<std::size_t>(channels) * spatial * eb;
    DeviceBuffer x(bytes), y(bytes), dy(bytes), dx(bytes);
    cudnnActivationDescriptor_t act = nullptr;
    check(cudnnCreateActivationDescriptor(&act), "cudnnCreateActivationDescriptor");
    check(cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
          "cudnnSetActivationDescriptor");
    const auto one_call = [&](cudnnTensorDescriptor_t d) {
      if (!r.backward)
        check(cudnnActivationForward(cudnn_, act, &one, d, x.get(), &zero, d, y.get()),
              "cudnnActivationForward");
      else
        check(cudnnActivationBackward(cudnn_, act, &one, d, y.get(), d, dy.get(), d, x.get(), &zero,
                                      d, dx.get()),
              "cudnnActivationBackward");
    };
    call = [&] {
      for (std::int64_t i = 0; i < pieces.full; ++i) one_call(t.d);
      if (tail) one_call(tail->d);
    };
    res.algorithm = r.backward ? "cudnnActivationBackward(relu)" : "cudnnActivationForward(relu)";
    if (split) res.algorithm += fmt::format(" ({} pieces)", pieces.calls());
    try {
      res.timing = time(call);
    } catch (...) {
      cudnnDestroyActivationDescriptor(act);
      throw;
    }
    cudnnDestroyActivationDescriptor(act);
    return {res};
  }
  const int channels = static_cast<int>(std::max<std::int64_t>(r.channels, 1));
  const int spatial = as_int(std::max<std::int64_t>(r.elements / channels, 1), "elements/channels");
  // Batch-norm: 1 × C × (E/C) × 1; softmax: rows × classes as N × C × 1 × 1.
  const bool softmax = r.kind == KernelKind::kSoftmax;
  Tensor t(dt, softmax ? spatial : 1, channels, softmax ? 1 : spatial, 1);
  const std::size_t bytes = static_cast<std::size_t>(channels) * spatial * eb;
  DeviceBuffer x(bytes), y(bytes), dy(bytes), dx(bytes);
  if (softmax) {
    if (!r.backward)
      call = [&] {
        check(cudnnSoftmaxForward(cudnn_, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                  t.d, x.get(), &zero, t.d, y.get()),
              "cudnnSoftmaxForward");
      };
    else
      call = [&] {
        check(cudnnSoftmaxBackward(cudnn_, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                   t.d, y.get(), t.d, dy.get(), &zero, t.d, dx.get()),
              "cudnnSoftmaxBackward");
      };
    res.algorithm = r.backward ? "cudnnSoftmaxBackward" : "cudnnSoftmaxForward";
    res.timing = time(call);
    return {res};
  }
  // Batch-norm, spatial mode, training.
  cudnnTensorDescriptor_t bn = nullptr;
  check(cudnnCreateTensorDescriptor(&bn), "cudnnCreateTensorDescriptor");
  check(cudnnDeriveBNTensorDescriptor(bn, t.d, CUDNN_BATCHNORM_SPATIAL),
        "cudnnDeriveBNTensorDescriptor");
  const std::size_t pbytes = static_cast<std::size_t>(channels) * sizeof(float);
  DeviceBuffer scale(pbytes), bias(pbytes), mean(pbytes), var(pbytes), save_mean(pbytes),
      save_inv(pbytes), dscale(pbytes), dbias(pbytes);
  if (!r.backward)
    call = [&] {
      check(cudnnBatchNormalizationForwardTraining(cudnn_, CUDNN_BATCHNORM_SPATIAL, &one, &zero,
                                                   t.d, x.get(), t.d, y.get(), bn, scale.get(),
                                                   bias.get(), 0.1, mean.get(), var.get(), 1e-5,
                                                   save_mean.get(), save_inv.get()),
            "cudnnBatchNormalizationForwardTraining");
    };
  else
    call = [&] {
      check(cudnnBatchNormalizationBackward(cudnn_, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one,
                                            &zero, t.d, x.get(), t.d, dy.get(), t.d, dx.get(), bn,
                                            scale.get(), dscale.get(), dbias.get(), 1e-5,
                                            save_mean.get(), save_inv.get()),
            "cudnnBatchNormalizationBackward");
    };
  res.algorithm = r.backward ? "cudnnBatchNormalizationBackward(spatial)"
                             : "cudnnBatchNormalizationForwardTraining(spatial)";
  try {
    res.timing = time(call);
  } catch (...) {
    cudnnDestroyTensorDescriptor(bn);
    throw;
  }
  cudnnDestroyTensorDescriptor(bn);
  return {res};
}

}  // namespace scalecast::kernels::cuda
