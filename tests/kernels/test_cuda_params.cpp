#include <doctest/doctest.h>

#include "kernels/cuda_params.hpp"

using namespace scalecast::kernels;
using scalecast::common::DType;

TEST_SUITE("unit") {
  TEST_CASE("cudnn descriptors for an fp32 ResNet conv are packed NCHW") {
    const ConvParams c{32, 64, 56, 56, 256, 1, 1, 0, 0, 1, 1, 1, 1, 1};
    const CudnnConvParams p = cudnn_conv_params(c, DType::kFp32, false);
    CHECK(p.x_dims == std::array<int, 4>{32, 64, 56, 56});
    CHECK(p.x_strides == std::array<int, 4>{64 * 56 * 56, 56 * 56, 56, 1});
    CHECK(p.w_dims == std::array<int, 4>{256, 64, 1, 1});
    CHECK(p.y_dims == std::array<int, 4>{32, 256, 56, 56});
    CHECK(p.data_type == "float");
    CHECK(p.compute_type == "float");
    CHECK_FALSE(p.tensor_op_math);
    CHECK_FALSE(p.nhwc);
    CHECK(p.element_bytes == 4);
  }

  TEST_CASE("tensor-core fp16 conv pads channels to 8 in NHWC") {
    // The ResNet stem: C = 3 is timed as C = 8 (DeepBench USE_TENSOR_CORES; docs/architecture.md,
    // "Calibration").
    const ConvParams c{16, 3, 224, 224, 64, 7, 7, 3, 3, 2, 2, 1, 1, 1};
    const CudnnConvParams p = cudnn_conv_params(c, DType::kFp16, true);
    CHECK(p.padded_c == 8);
    CHECK(p.padded_k == 64);
    CHECK(p.nhwc);
    CHECK(p.tensor_op_math);
    CHECK(p.data_type == "half");
    CHECK(p.compute_type == "float");
    CHECK(p.x_dims == std::array<int, 4>{16, 8, 224, 224});
    CHECK(p.x_strides == std::array<int, 4>{8 * 224 * 224, 1, 224 * 8, 8});
    CHECK(p.y_dims == std::array<int, 4>{16, 64, 112, 112});
    CHECK(p.w_elements == 64 * 8 * 7 * 7);
    // Without tensor cores nothing is padded.
    CHECK(cudnn_conv_params(c, DType::kFp16, false).padded_c == 3);
    CHECK_THROWS_WITH(cudnn_conv_params(c, DType::kFp8, true),
                      "conv: cuDNN's legacy convolution API has no fp8 path");
  }

  TEST_CASE("cublas GEMM leading dimensions and compute types") {
    const CublasGemmParams nn =
        cublas_gemm_params({1760, 16, 1760, false, false, 1}, DType::kFp32, false);
    CHECK(nn.lda == 1760);
    CHECK(nn.ldb == 1760);
    CHECK(nn.ldc == 1760);
    CHECK(nn.compute_type == "CUBLAS_COMPUTE_32F");
    const CublasGemmParams tn =
        cublas_gemm_params({5124, 9124, 2560, true, false, 1}, DType::kFp16, true);
    CHECK(tn.lda == 2560);  // A stored k×m
    CHECK(tn.ldb == 2560);
    CHECK(tn.ab_type == "CUDA_R_16F");
    CHECK(tn.compute_type == "CUBLAS_COMPUTE_32F");
    const CublasGemmParams nt =
        cublas_gemm_params({35, 8457, 4096, false, true, 3}, DType::kTf32, true);
    CHECK(nt.ldb == 8457);  // B stored n×k
    CHECK(nt.compute_type == "CUBLAS_COMPUTE_32F_FAST_TF32");
    CHECK(nt.c_elements == 35 * 8457 * 3);
    CHECK_THROWS_WITH(cublas_gemm_params({0, 1, 1, false, false, 1}, DType::kFp32, false),
                      "gemm: M, N, K and batch must be positive (got 0x1x1 b1)");
  }

  TEST_CASE("nccl-tests algbw and busbw conventions") {
    // [NCCL-tests-PERF] factors.
    CHECK(nccl_bus_factor(CollectiveKind::kAllReduce, 8) == doctest::Approx(1.75));
    CHECK(nccl_bus_factor(CollectiveKind::kAllGather, 4) == doctest::Approx(0.75));
    CHECK(nccl_bus_factor(CollectiveKind::kReduceScatter, 2) == doctest::Approx(0.5));
    CHECK(nccl_bus_factor(CollectiveKind::kBroadcast, 8) == 1.0);
    // vTrain V100 LUT: 1 GiB all-reduce on 8 GPUs at 134.5 GB/s busbw takes S·1.75/busbw.
    const std::int64_t gib = std::int64_t{1} << 30;
    const double t = gib * 1.75 / 134.5e9;
    CHECK(nccl_busbw(CollectiveKind::kAllReduce, 8, gib, t) == doctest::Approx(134.5e9));
    CHECK(nccl_algbw(gib, t) == doctest::Approx(134.5e9 / 1.75));
    // All-gather: S = sendcount × sizeof × n, so each rank sends S/n.
    const NcclCounts ag = nccl_counts(CollectiveKind::kAllGather, 1000 * 4 + 3, 4, 8);
    CHECK(ag.send_count == 125);
    CHECK(ag.recv_count == 1000);
    CHECK(ag.bytes == 4000);
    const NcclCounts rs = nccl_counts(CollectiveKind::kReduceScatter, 4096, 2, 4);
    CHECK(rs.recv_count == 512);
    CHECK(rs.send_count == 2048);
    CHECK(nccl_counts(CollectiveKind::kAllReduce, 4096, 4, 4).send_count == 1024);
  }

  TEST_CASE("device names map to catalog keys") {
    CHECK(catalog_key_for_gpu("NVIDIA H200", 141e9) == "h200-sxm");
    CHECK(catalog_key_for_gpu("Tesla V100-SXM2-16GB", 16e9) == "v100-sxm2");
    CHECK(catalog_key_for_gpu("NVIDIA A100-SXM4-80GB", 80e9) == "a100-sxm4-80gb");
    CHECK(catalog_key_for_gpu("NVIDIA A100-SXM4-40GB", 40e9) == "a100-sxm4-40gb");
    CHECK(catalog_key_for_gpu("NVIDIA GeForce RTX 4090", 24e9).empty());
  }

  TEST_CASE("library version numbers parse as the libraries encode them") {
    CHECK(cudnn_version_string(91900) == "9.19.0");
    CHECK(cuda_version_string(13000) == "13.0");
    CHECK(cuda_version_string(12040) == "12.4");
    CHECK(nccl_version_string(22809) == "2.28.9");
    CHECK(nccl_version_string(2708) == "2.7.8");
  }

  TEST_CASE("an elementwise piece fits one cuDNN tensor") {
    CHECK(kCudaElementwisePiece < (std::int64_t{1} << 31));
    // The whole TP shard of Llama 3 70B at TP 8 (8.8 G elements) in pieces that each fit.
    const ElementPieces p = element_pieces(8'800'000'000, kCudaElementwisePiece);
    CHECK(p.calls() == 9);
    CHECK(p.piece == kCudaElementwisePiece);
    CHECK(p.full * p.piece + p.tail == 8'800'000'000);
  }
}
