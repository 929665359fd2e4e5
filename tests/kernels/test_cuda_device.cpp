#include <doctest/doctest.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include "kernels/cuda_params.hpp"
#include "kernels/kernel_backend.hpp"

using namespace scalecast::kernels;

// The first suite runs real cuDNN/cuBLAS kernels; labelled gpu so the default suites skip it on
// machines without a device. On a GPU machine it must pass.
TEST_SUITE("gpu") {
  TEST_CASE("cuda backend times GEMM and conv on the device") {
    REQUIRE(cuda_backend_built());
    CudaOptions o;
    o.timing.max_total_s = 0.5;
    auto gpu = make_cuda_backend(o);
    const DeviceInfo info = gpu->device_info();
    MESSAGE("device " << info.name << " driver " << info.driver);
    KernelRequest g;
    g.kind = KernelKind::kGemm;
    g.gemm = {4096, 4096, 4096, false, false, 1};
    const auto r = gpu->measure(g);
    REQUIRE(!r.empty());
    const double tflops = 2.0 * 4096 * 4096 * 4096 / r[0].timing.median_s / 1e12;
    MESSAGE("GEMM 4096^3 fp32: " << tflops << " TFLOP/s");
    CHECK(tflops > 1.0);
    KernelRequest c;
    c.kind = KernelKind::kConv;
    c.conv = {32, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1};
    c.dtype = scalecast::common::DType::kFp16;
    c.tensor_core = true;
    const auto cr = gpu->measure(c);
    REQUIRE(cr.size() == 2);  // find and heuristic
    CHECK(cr[0].selection == "find");
    CHECK(cr[1].selection == "heuristic");
    CHECK(cr[0].timing.median_s > 0);
  }

  // Every other kernel kind the calibration runs: each gives a positive time, and the physics
  // orders them (a tensor-core fp16 GEMM outruns fp32 FMA; a device copy outruns a host copy);
  // NCCL with two or more GPUs (with one, the backend's reason for skipping it).
  TEST_CASE("cuda backend times every kernel kind and NCCL on the device") {
    REQUIRE(cuda_backend_built());
    CudaOptions o;
    o.timing.max_total_s = 0.5;
    auto gpu = make_cuda_backend(o);
    const auto one = [&](const KernelRequest& r) {
      const auto res = gpu->measure(r);
      REQUIRE_MESSAGE(!res.empty(), describe(r));
      CHECK_MESSAGE(res[0].timing.median_s > 0, describe(r));
      MESSAGE(describe(r) << ": " << res[0].timing.median_s * 1e6 << " us (" << res[0].algorithm
                          << ")");
      return res[0];
    };
    KernelRequest g;
    g.kind = KernelKind::kGemm;
    g.gemm = {4096, 4096, 4096, false, false, 1};
    const double fp32 = one(g).timing.median_s;
    g.dtype = scalecast::common::DType::kFp16;
    g.tensor_core = true;
    const double fp16 = one(g).timing.median_s;
    CHECK(fp16 < fp32);
    for (auto kind : {KernelKind::kElementwise, KernelKind::kNormalization, KernelKind::kSoftmax}) {
      KernelRequest e;
      e.kind = kind;
      e.dtype = scalecast::common::DType::kFp16;
      e.elements = 1 << 22;
      e.channels = kind == KernelKind::kSoftmax ? 1024 : 64;
      one(e);
      e.backward = true;
      if (kind != KernelKind::kSoftmax) one(e);
    }
    {
      // Above cuDNN's 2^31 elements per tensor: timed over reused pieces, and a piece and a
      // half cost about one and a half pieces (streaming memory, far above the L2 cache).
      KernelRequest big;
      big.kind = KernelKind::kElementwise;
      big.dtype = scalecast::common::DType::kFp16;
      big.elements = kCudaElementwisePiece;
      const double piece = one(big).timing.median_s;
      big.elements = 3 * kCudaElementwisePiece + kCudaElementwisePiece / 2;
      const KernelResult r = one(big);
      CHECK(r.algorithm == "cudnnActivationForward(relu) (4 pieces)");
      CHECK(r.timing.median_s == doctest::Approx(3.5 * piece).epsilon(0.15));
    }
    KernelRequest pool;
    pool.kind = KernelKind::kPooling;
    pool.dtype = scalecast::common::DType::kFp16;
    pool.conv = {1, 64, 113, 113, 1, 3, 3, 0, 0, 2, 2, 1, 1, 1};
    pool.elements = 64 * 56 * 56;
    one(pool);
    KernelRequest m;
    m.kind = KernelKind::kMemcpy;
    m.size_bytes = 64 << 20;
    m.direction = CopyDirection::kHostToDevice;
    const double h2d = one(m).timing.median_s;
    m.direction = CopyDirection::kDeviceToDevice;
    const double d2d = one(m).timing.median_s;
    CHECK(d2d < h2d);
    KernelRequest c;
    c.kind = KernelKind::kCollective;
    c.collective = CollectiveKind::kAllReduce;
    c.dtype = scalecast::common::DType::kFp32;
    c.size_bytes = 16 << 20;
    if (gpu->device_info().device_count < 2) {
      // One GPU: the backend says why it skips NCCL (the calibration lists it as unsupported).
      CHECK(gpu->unsupported_reason(c).find("two or more GPUs") != std::string::npos);
    } else {
      const auto ar = one(c);
      CHECK(ar.ranks == gpu->device_info().device_count);
      CHECK(ar.algbw_Bps > 0);
    }
  }
}

namespace {
// True when a shared object whose path contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(name) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("the CUDA libraries are loaded only when a CUDA backend is made") {
    // Linking the kernels (as every scalecast command does) maps no CUDA library: the backend is
    // a module opened by make_cuda_backend(). Without a GPU making it fails, but only after the
    // module and its libraries loaded and the CUDA runtime itself said why.
    CHECK_FALSE(mapped("libcublasLt"));
    CHECK_FALSE(mapped("libcudnn"));
    CHECK_FALSE(mapped("libscalecast_cuda"));
    if (!cuda_backend_built()) {
      CHECK_THROWS_WITH_AS(make_cuda_backend(CudaOptions{}),
                           doctest::Contains("the cuda backend is not part of this build"),
                           std::runtime_error);
      return;
    }
    try {
      const auto gpu = make_cuda_backend(CudaOptions{});
      CHECK(gpu->device_info().backend == "cuda");
    } catch (const std::runtime_error& e) {
      MESSAGE("no usable GPU here: " << e.what());
      CHECK(std::string(e.what()).rfind("cuda: ", 0) == 0);
      CHECK(std::string(e.what()).find("cannot load the CUDA backend module") == std::string::npos);
    }
    CHECK(mapped("libscalecast_cuda"));
    CHECK(mapped("libcublasLt"));
    CHECK(mapped("libcudnn"));
  }
}
