#include <doctest/doctest.h>

#include <fstream>
#include <stdexcept>
#include <string>

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
