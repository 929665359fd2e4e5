#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/cpu_affinity.hpp"
#include "kernels/cpu_backend.hpp"
#include "kernels/cpu_conv.hpp"
#include "kernels/kernel_backend.hpp"
#include "kernels/timing.hpp"

using namespace scalecast::kernels;

namespace {

std::vector<float> pattern(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(((i + 1) * (seed * 2654435761u + 97u)) % 1013) / 1013.0f - 0.5f;
  return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

const ConvParams kShapes[] = {
    {2, 3, 9, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1},  // 3×3 pad 1
    {1, 4, 8, 8, 6, 3, 2, 0, 1, 2, 1, 1, 1, 2},  // grouped, strided, non-square filter
    {2, 2, 7, 7, 3, 3, 3, 2, 2, 1, 1, 2, 2, 1},  // dilated
    {1, 8, 5, 5, 4, 1, 1, 0, 0, 1, 1, 1, 1, 1},  // 1×1
};

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("im2col convolution matches the direct convolution") {
    for (const auto& p : kShapes) {
      CpuConv conv(p);
      const auto x = pattern(conv.x_size(), 1), w = pattern(conv.w_size(), 2);
      std::vector<float> y(conv.y_size()), ref(conv.y_size());
      conv.forward(x.data(), w.data(), y.data());
      direct_conv_forward(p, x.data(), w.data(), ref.data());
      double worst = 0;
      for (std::size_t i = 0; i < y.size(); ++i)
        worst = std::max(worst, std::abs(double(y[i]) - ref[i]));
      CHECK(worst < 1e-4);
    }
  }

  TEST_CASE("backward passes satisfy the adjoint identities") {
    // <conv(x, w), dy> = <x, bwd_data(dy, w)> = <w, bwd_filter(x, dy)>.
    for (const auto& p : kShapes) {
      CpuConv conv(p);
      const auto x = pattern(conv.x_size(), 3), w = pattern(conv.w_size(), 4),
                 dy = pattern(conv.y_size(), 5);
      std::vector<float> y(conv.y_size()), dx(conv.x_size()), dw(conv.w_size());
      conv.forward(x.data(), w.data(), y.data());
      conv.backward_data(dy.data(), w.data(), dx.data());
      conv.backward_filter(x.data(), dy.data(), dw.data());
      const double lhs = dot(y, dy);
      CHECK(dot(x, dx) == doctest::Approx(lhs).epsilon(1e-4));
      CHECK(dot(w, dw) == doctest::Approx(lhs).epsilon(1e-4));
    }
  }

  TEST_CASE("convolutions sharing a caller's workspace compute what they compute alone") {
    // Two geometries on one scratch buffer, run in turn (each overwrites the other's im2col
    // columns): all three passes give the same bytes as with private scratch.
    std::size_t most = 0;
    for (const auto& p : kShapes) most = std::max(most, CpuConv(p).col_size());
    std::vector<float> shared(most, 7.0f);
    for (const auto& p : kShapes) {
      CpuConv alone(p), sharing(p), other(kShapes[0]);
      sharing.use_workspace(shared.data(), shared.size());
      other.use_workspace(shared.data(), shared.size());
      const auto x = pattern(alone.x_size(), 6), w = pattern(alone.w_size(), 7),
                 dy = pattern(alone.y_size(), 8);
      const auto x0 = pattern(other.x_size(), 9), w0 = pattern(other.w_size(), 10);
      std::vector<float> y0(other.y_size());
      std::vector<float> y(alone.y_size()), dx(alone.x_size()), dw(alone.w_size());
      std::vector<float> ys(y.size()), dxs(dx.size()), dws(dw.size());
      alone.forward(x.data(), w.data(), y.data());
      alone.backward_data(dy.data(), w.data(), dx.data());
      alone.backward_filter(x.data(), dy.data(), dw.data());
      other.forward(x0.data(), w0.data(), y0.data());
      sharing.forward(x.data(), w.data(), ys.data());
      other.forward(x0.data(), w0.data(), y0.data());
      sharing.backward_data(dy.data(), w.data(), dxs.data());
      other.forward(x0.data(), w0.data(), y0.data());
      sharing.backward_filter(x.data(), dy.data(), dws.data());
      CHECK(ys == y);
      CHECK(dxs == dx);
      CHECK(dws == dw);
    }
    CpuConv conv(kShapes[0]);
    std::vector<float> small(conv.col_size() - 1);
    CHECK_THROWS_WITH(conv.use_workspace(small.data(), small.size()),
                      ("cpu conv: workspace of " + std::to_string(small.size()) +
                       " floats, expected at least " + std::to_string(conv.col_size()))
                          .c_str());
  }

  TEST_CASE("a CPU pin holds the thread and its new threads on one CPU and is undone after") {
    const std::vector<int> before = allowed_cpus();
    REQUIRE(!before.empty());
    const int cpu = before.back();
    {
      const CpuPin pin(cpu);
      CHECK(allowed_cpus() == std::vector<int>{cpu});
      CHECK(current_cpu() == cpu);
      std::vector<int> in_thread;
      std::thread([&] { in_thread = allowed_cpus(); }).join();
      CHECK(in_thread == std::vector<int>{cpu});
    }
    CHECK(allowed_cpus() == before);
    CHECK_THROWS_WITH_AS(CpuPin(100000), "CPU 100000 is not one this thread may run on",
                         std::invalid_argument);
    CHECK(allowed_cpus() == before);
  }

  TEST_CASE("impossible conv geometry is rejected with the reason") {
    ConvParams p{1, 3, 2, 2, 4, 5, 5, 0, 0, 1, 1, 1, 1, 1};
    CHECK_THROWS_WITH(CpuConv{p}, "conv height: filter span 5 exceeds padded input 2");
    p = {1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 2};
    CHECK_THROWS_WITH(CpuConv{p}, "cpu conv: groups must divide C and K, and N must be >= 1");
  }

  TEST_CASE("timing grows the loop to the minimum sample time and stops when stable") {
    int calls = 0;
    TimingOptions o;
    o.min_sample_s = 1e-3;
    // A kernel of exactly 20 µs: R must reach 50 calls per sample, the median is 20 µs.
    const TimingStats s = time_until_stable(
        [&](int reps) {
          calls += reps;
          return reps * 20e-6;
        },
        o);
    CHECK(s.reps_per_sample * 20e-6 >= o.min_sample_s);
    CHECK(s.median_s == doctest::Approx(20e-6).scale(0));
    CHECK(s.samples == o.min_samples);
    // A noisy kernel never settles: sampling stops at the cap.
    int k = 0;
    const TimingStats noisy = time_until_stable(
        [&](int reps) {
          ++k;
          return reps * (k % 2 ? 1e-3 : 3e-3) * (1 + 0.1 * k);
        },
        o);
    CHECK(noisy.samples <= o.max_samples);
    CHECK(noisy.min_s < noisy.median_s);
  }

  TEST_CASE("the thread CPU clock counts this thread's work and not its waiting") {
    const double t0 = thread_cpu_time_s();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const double slept = thread_cpu_time_s() - t0;
    MESSAGE("30 ms asleep read " << slept * 1e3 << " ms on the thread CPU clock");
    CHECK(slept < 10e-3);
    volatile double sink = 0;
    const double t1 = thread_cpu_time_s();
    while (thread_cpu_time_s() - t1 < 5e-3) sink = sink + 1;
    CHECK(thread_cpu_time_s() - t1 >= 5e-3);
    TimingOptions o;
    o.cpu_thread_clock = true;
    o.min_sample_s = 2e-4;
    o.max_total_s = 0.05;
    auto cpu = make_cpu_backend(o);
    CHECK(cpu->device_info().properties.at("clock") == "thread_cpu");
    CHECK(make_cpu_backend(TimingOptions{})->device_info().properties.at("clock") == "wall");
    KernelRequest g;
    g.kind = KernelKind::kGemm;
    g.gemm = {64, 48, 32, false, false, 1};
    const auto r = cpu->measure(g);
    REQUIRE(r.size() == 1);
    CHECK(r[0].timing.median_s > 0);
  }

  TEST_CASE("cpu backend times real kernels and explains what it cannot run") {
    TimingOptions o;
    o.min_sample_s = 2e-4;
    o.max_total_s = 0.05;
    auto cpu = make_cpu_backend(o);
    const DeviceInfo info = cpu->device_info();
    CHECK(info.backend == "cpu");
    CHECK(!info.libraries.at("eigen").empty());
    KernelRequest g;
    g.kind = KernelKind::kGemm;
    g.gemm = {64, 48, 32, true, false, 2};
    const auto r = cpu->measure(g);
    REQUIRE(r.size() == 1);
    CHECK(r[0].timing.median_s > 0);
    CHECK(r[0].timing.min_s <= r[0].timing.median_s);
    CHECK(r[0].algorithm == "eigen-gemm");
    for (KernelKind kind : {KernelKind::kElementwise, KernelKind::kNormalization,
                            KernelKind::kSoftmax, KernelKind::kMemcpy}) {
      KernelRequest e;
      e.kind = kind;
      e.elements = 4096;
      e.channels = 16;
      e.size_bytes = 1 << 16;
      e.direction = CopyDirection::kHostToHost;
      for (bool bwd : {false, true}) {
        e.backward = bwd;
        CHECK(cpu->measure(e).at(0).timing.median_s > 0);
      }
    }
    KernelRequest half = g;
    half.dtype = scalecast::common::DType::kFp16;
    CHECK(cpu->unsupported_reason(half) == "the cpu backend measures fp32 only (asked for fp16)");
    KernelRequest coll;
    coll.kind = KernelKind::kCollective;
    CHECK(cpu->unsupported_reason(coll) == "collectives need the cuda backend (NCCL)");
    CHECK_THROWS_WITH(cpu->measure(half),
                      "cpu: cannot measure gemm fp16 m64 n48 k32 TN b2: the cpu backend measures "
                      "fp32 only (asked for fp16)");
  }

  TEST_CASE("an elementwise kernel larger than one buffer set is timed over reused pieces") {
    // The pieces cover the elements exactly: full pieces, then the remainder.
    for (const auto& [elements, cap] : std::vector<std::pair<std::int64_t, std::int64_t>>{
             {1, 1}, {2500, 1000}, {3000, 1000}, {999, 1000}, {8'800'000'000, 1 << 27}}) {
      const ElementPieces p = element_pieces(elements, cap);
      CHECK(p.piece == std::min(elements, cap));
      CHECK(p.full * p.piece + p.tail == elements);
      CHECK(p.tail < p.piece);
      CHECK(p.calls() == (elements + cap - 1) / cap);
    }
    CHECK_THROWS_AS(element_pieces(0, 10), std::invalid_argument);
    CHECK_THROWS_AS(element_pieces(10, 0), std::invalid_argument);
    CHECK_THROWS_AS(CpuBackend(TimingOptions{}, 0), std::invalid_argument);

    TimingOptions o;
    o.min_sample_s = 2e-4;
    o.max_total_s = 0.05;
    CpuBackend cpu(o, 1000);
    KernelRequest e;
    e.kind = KernelKind::kElementwise;
    e.elements = 2500;
    const auto pieces = cpu.measure(e).at(0);
    CHECK(pieces.algorithm == "eigen-relu (3 pieces)");
    CHECK(pieces.timing.median_s > 0);
    e.backward = true;
    CHECK(cpu.measure(e).at(0).algorithm == "eigen-relu-bwd (3 pieces)");
    e.elements = 1000;
    CHECK(cpu.measure(e).at(0).algorithm == "eigen-relu-bwd");
  }
}
