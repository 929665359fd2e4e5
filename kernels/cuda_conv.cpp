// cuDNN convolutions (legacy API, still in cuDNN 9; [cuDNN-legacy-doc]): descriptors from
// cudnn_conv_params(), the exhaustive cudnnFind…AlgorithmEx best (benchmark mode) and the
// cudnnGet…Algorithm_v7 heuristic top-1 (default mode), each timed with CUDA events within the
// workspace cap.

#include <fmt/format.h>

#include <array>

#include "kernels/cuda_support.hpp"

namespace scalecast::kernels::cuda {
namespace {

constexpr std::array<const char*, 8> kFwdNames{
    "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
    "WINOGRAD",      "WINOGRAD_NONFUSED"};
constexpr std::array<const char*, 6> kBwdDataNames{"ALGO_0",     "ALGO_1",   "FFT",
                                                   "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
constexpr std::array<const char*, 7> kBwdFilterNames{
    "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};

template <std::size_t N>
std::string algo_name(const std::array<const char*, N>& names, int algo) {
  return algo >= 0 && static_cast<std::size_t>(algo) < N ? names[static_cast<std::size_t>(algo)]
                                                         : fmt::format("ALGO_{}", algo);
}

const char* math_name(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_TENSOR_OP_MATH:
      return "tensor_op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
      return "tensor_op_allow_conversion";
    case CUDNN_FMA_MATH:
      return "fma";
    default:
      return "default";
  }
}

struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  explicit Descriptors(const CudnnConvParams& p) {
    check(cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
    check(cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor");
    check(cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
    const cudnnDataType_t dt = cudnn_type(p.data_type);
    check(cudnnSetTensorNdDescriptor(x, dt, 4, p.x_dims.data(), p.x_strides.data()),
          "cudnnSetTensorNdDescriptor(x)");
    check(cudnnSetTensorNdDescriptor(y, dt, 4, p.y_dims.data(), p.y_strides.data()),
          "cudnnSetTensorNdDescriptor(y)");
    check(cudnnSetFilterNdDescriptor(w, dt, p.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, 4,
                                     p.w_dims.data()),
          "cudnnSetFilterNdDescriptor");
    const int pad[2] = {p.pad_h, p.pad_w}, stride[2] = {p.stride_h, p.stride_w},
              dil[2] = {p.dilation_h, p.dilation_w};
    check(cudnnSetConvolutionNdDescriptor(conv, 2, pad, stride, dil, CUDNN_CROSS_CORRELATION,
                                          cudnn_type(p.compute_type)),
          "cudnnSetConvolutionNdDescriptor");
    check(cudnnSetConvolutionGroupCount(conv, p.groups), "cudnnSetConvolutionGroupCount");
    check(cudnnSetConvolutionMathType(conv,
                                      p.tensor_op_math ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH),
          "cudnnSetConvolutionMathType");
  }
  ~Descriptors() {
    cudnnDestroyConvolutionDescriptor(conv);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyTensorDescriptor(x);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
};

// First successful entry of a perf array whose workspace fits the cap.
template <typename Perf>
const Perf* first_fitting(const std::vector<Perf>& perf, int count, std::size_t cap) {
  for (int i = 0; i < count; ++i)
    if (perf[static_cast<std::size_t>(i)].status == CUDNN_STATUS_SUCCESS &&
        perf[static_cast<std::size_t>(i)].memory <= cap)
      return &perf[static_cast<std::size_t>(i)];
  return nullptr;
}

}  // namespace

std::vector<KernelResult> CudaBackend::conv(const KernelRequest& r) {
  const CudnnConvParams p = cudnn_conv_params(r.conv, r.dtype, r.tensor_core);
  const Descriptors d(p);
  const auto eb = static_cast<std::size_t>(p.element_bytes);
  DeviceBuffer x(static_cast<std::size_t>(p.x_elements) * eb),
      w(static_cast<std::size_t>(p.w_elements) * eb),
      y(static_cast<std::size_t>(p.y_elements) * eb);
  const std::size_t cap = workspace_.bytes();
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const void* alpha = p.data_type == "double" ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = p.data_type == "double" ? static_cast<const void*>(&zero_d) : &zero_f;
  const std::string padded =
      p.padded_c != r.conv.c || p.padded_k != r.conv.k
          ? fmt::format("timed with c padded to {} and k to {}", p.padded_c, p.padded_k)
          : "";
  std::vector<KernelResult> out;
  const auto emit = [&](const char* selection, const std::string& algo, cudnnMathType_t math,
                        std::size_t ws, const std::function<void()>& call) {
    KernelResult res;
    res.selection = selection;
    res.algorithm = algo + (padded.empty() ? "" : " (" + padded + ")");
    res.math = math_name(math);
    res.workspace_bytes = static_cast<std::int64_t>(ws);
    res.workspace_cap_bytes = static_cast<std::int64_t>(cap);
    res.timing = time(call);
    out.push_back(res);
  };
  if (r.pass == ConvPass::kForward) {
    int max = 0, n = 0;
    check(cudnnGetConvolutionForwardAlgorithmMaxCount(cudnn_, &max), "MaxCount");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> found(static_cast<std::size_t>(max)),
        heur(found.size());
    check(cudnnFindConvolutionForwardAlgorithmEx(cudnn_, d.x, x.get(), d.w, w.get(), d.conv, d.y,
                                                 y.get(), max, &n, found.data(), workspace_.get(),
                                                 cap),
          "cudnnFindConvolutionForwardAlgorithmEx");
    const auto* best = first_fitting(found, n, cap);
    int hn = 0;
    check(cudnnGetConvolutionForwardAlgorithm_v7(cudnn_, d.x, d.w, d.conv, d.y, max, &hn,
                                                 heur.data()),
          "cudnnGetConvolutionForwardAlgorithm_v7");
    const auto* pick = first_fitting(heur, hn, cap);
    for (auto [sel, perf] : {std::pair{"find", best}, std::pair{"heuristic", pick}}) {
      if (!perf) continue;
      check(cudnnSetConvolutionMathType(d.conv, perf->mathType), "cudnnSetConvolutionMathType");
      emit(sel, algo_name(kFwdNames, perf->algo), perf->mathType, perf->memory, [&, perf] {
        check(cudnnConvolutionForward(cudnn_, alpha, d.x, x.get(), d.w, w.get(), d.conv, perf->algo,
                                      workspace_.get(), perf->memory, beta, d.y, y.get()),
              "cudnnConvolutionForward");
      });
    }
  } else if (r.pass == ConvPass::kBackwardData) {
    int max = 0, n = 0;
    check(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnn_, &max), "MaxCount");
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> found(static_cast<std::size_t>(max)),
        heur(found.size());
    check(cudnnFindConvolutionBackwardDataAlgorithmEx(cudnn_, d.w, w.get(), d.y, y.get(), d.conv,
                                                      d.x, x.get(), max, &n, found.data(),
                                                      workspace_.get(), cap),
          "cudnnFindConvolutionBackwardDataAlgorithmEx");
    const auto* best = first_fitting(found, n, cap);
    int hn = 0;
    check(cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnn_, d.w, d.y, d.conv, d.x, max, &hn,
                                                      heur.data()),
          "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    const auto* pick = first_fitting(heur, hn, cap);
    for (auto [sel, perf] : {std::pair{"find", best}, std::pair{"heuristic", pick}}) {
      if (!perf) continue;
      check(cudnnSetConvolutionMathType(d.conv, perf->mathType), "cudnnSetConvolutionMathType");
      emit(sel, algo_name(kBwdDataNames, perf->algo), perf->mathType, perf->memory, [&, perf] {
        check(cudnnConvolutionBackwardData(cudnn_, alpha, d.w, w.get(), d.y, y.get(), d.conv,
                                           perf->algo, workspace_.get(), perf->memory, beta, d.x,
                                           x.get()),
              "cudnnConvolutionBackwardData");
      });
    }
  } else {
    int max = 0, n = 0;
    check(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnn_, &max), "MaxCount");
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> found(static_cast<std::size_t>(max)),
        heur(found.size());
    check(cudnnFindConvolutionBackwardFilterAlgorithmEx(cudnn_, d.x, x.get(), d.y, y.get(), d.conv,
                                                        d.w, w.get(), max, &n, found.data(),
                                                        workspace_.get(), cap),
          "cudnnFindConvolutionBackwardFilterAlgorithmEx");
    const auto* best = first_fitting(found, n, cap);
    int hn = 0;
    check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnn_, d.x, d.y, d.conv, d.w, max, &hn,
                                                        heur.data()),
          "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    const auto* pick = first_fitting(heur, hn, cap);
    for (auto [sel, perf] : {std::pair{"find", best}, std::pair{"heuristic", pick}}) {
      if (!perf) continue;
      check(cudnnSetConvolutionMathType(d.conv, perf->mathType), "cudnnSetConvolutionMathType");
      emit(sel, algo_name(kBwdFilterNames, perf->algo), perf->mathType, perf->memory, [&, perf] {
        check(cudnnConvolutionBackwardFilter(cudnn_, alpha, d.x, x.get(), d.y, y.get(), d.conv,
                                             perf->algo, workspace_.get(), perf->memory, beta, d.w,
                                             w.get()),
              "cudnnConvolutionBackwardFilter");
      });
    }
  }
  if (out.empty())
    throw std::runtime_error(
        fmt::format("cudnn: no algorithm for {} fits the {} B workspace cap", describe(r), cap));
  check(cudaGetLastError(), "convolution");
  return out;
}

}  // namespace scalecast::kernels::cuda
