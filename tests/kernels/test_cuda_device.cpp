#include <doctest/doctest.h>

#include "kernels/kernel_backend.hpp"

using namespace scalecast::kernels;

// Runs real cuDNN/cuBLAS kernels; labelled gpu so the default suites skip it on machines
// without a device. On a GPU machine it must pass.
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
}
