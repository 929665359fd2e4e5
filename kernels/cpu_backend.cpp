#include "kernels/cpu_backend.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "kernels/cpu_conv.hpp"

namespace scalecast::kernels {
namespace {

using Mat = Eigen::MatrixXf;
using Vec = Eigen::VectorXf;
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown cpu";
}

// Deterministic, non-trivial data so no kernel sees all zeros (denormals, sparsity shortcuts).
void fill(std::vector<float>& v, float scale = 1.0f) {
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = scale * (static_cast<float>((i * 2654435761u) % 1000) / 1000.0f - 0.5f);
}

std::int64_t checked_elements(const KernelRequest& r) {
  if (r.elements <= 0)
    throw std::invalid_argument(fmt::format("cpu: {} needs elements > 0", describe(r)));
  return r.elements;
}

}  // namespace

double thread_cpu_time_s() {
  timespec ts{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    throw std::runtime_error("cpu: clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

CpuBackend::CpuBackend(const TimingOptions& timing, std::int64_t elementwise_piece)
    : timing_(timing), elementwise_piece_(elementwise_piece) {
  if (elementwise_piece_ <= 0)
    throw std::invalid_argument(
        fmt::format("cpu: elementwise piece must be > 0 elements, got {}", elementwise_piece_));
  // One thread's CPU clock sees only that thread's work: a kernel spread over several threads
  // would read too short.
  if (timing_.cpu_thread_clock && Eigen::nbThreads() != 1)
    throw std::invalid_argument(fmt::format(
        "cpu: the thread CPU clock needs single-threaded kernels, Eigen runs {} threads",
        Eigen::nbThreads()));
}

DeviceInfo CpuBackend::device_info() const {
  DeviceInfo d;
  d.backend = "cpu";
  d.name = cpu_model_name();
  d.key = "cpu-host";
  d.libraries["eigen"] =
      fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
  d.properties["hardware_threads"] = std::to_string(std::thread::hardware_concurrency());
  d.properties["eigen_threads"] = std::to_string(Eigen::nbThreads());
  d.properties["clock"] = timing_.cpu_thread_clock ? "thread_cpu" : "wall";
  return d;
}

std::string CpuBackend::unsupported_reason(const KernelRequest& r) const {
  if (r.dtype != common::DType::kFp32)
    return fmt::format("the cpu backend measures fp32 only (asked for {})",
                       common::to_string(r.dtype));
  if (r.kind == KernelKind::kCollective) return "collectives need the cuda backend (NCCL)";
  if (r.kind == KernelKind::kMemcpy && r.direction != CopyDirection::kHostToHost)
    return fmt::format("memcpy {} needs the cuda backend", to_string(r.direction));
  return "";
}

KernelResult CpuBackend::time(const std::function<void()>& call, std::string algorithm,
                              bool wall_clock) {
  KernelResult res;
  res.selection = "fixed";
  res.algorithm = std::move(algorithm);
  res.math = "fma";
  if (timing_.cpu_thread_clock && !wall_clock) {
    res.timing = time_until_stable(
        [&](int reps) {
          const double t0 = thread_cpu_time_s();
          for (int i = 0; i < reps; ++i) call();
          return thread_cpu_time_s() - t0;
        },
        timing_);
    return res;
  }
  res.timing = time_until_stable(
      [&](int reps) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < reps; ++i) call();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      },
      timing_);
  return res;
}

std::vector<KernelResult> CpuBackend::measure(const KernelRequest& r) {
  if (const auto why = unsupported_reason(r); !why.empty())
    throw std::invalid_argument(fmt::format("cpu: cannot measure {}: {}", describe(r), why));
  switch (r.kind) {
    case KernelKind::kGemm: {
      const auto& g = r.gemm;
      if (g.m <= 0 || g.n <= 0 || g.k <= 0 || g.batch <= 0)
        throw std::invalid_argument(fmt::format("cpu: bad gemm {}", describe(r)));
      // Column-major like BLAS: A stored m×k (k×m when transposed), B k×n (n×k when transposed).
      Mat a = Mat::Random(g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k);
      Mat b = Mat::Random(g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n);
      Mat c = Mat::Zero(g.m, g.n);
      auto call = [&] {
        for (std::int64_t i = 0; i < g.batch; ++i) {
          if (!g.trans_a && !g.trans_b) c.noalias() = a * b;
          if (g.trans_a && !g.trans_b) c.noalias() = a.transpose() * b;
          if (!g.trans_a && g.trans_b) c.noalias() = a * b.transpose();
          if (g.trans_a && g.trans_b) c.noalias() = a.transpose() * b.transpose();
        }
      };
      return {time(call, "eigen-gemm")};
    }
    case KernelKind::kConv: {
      CpuConv conv(r.conv);
      std::vector<float> x(conv.x_size()), w(conv.w_size()), y(conv.y_size());
      fill(x);
      fill(w, 0.1f);
      fill(y);
      std::function<void()> call;
      if (r.pass == ConvPass::kForward) call = [&] { conv.forward(x.data(), w.data(), y.data()); };
      if (r.pass == ConvPass::kBackwardData)
        call = [&] { conv.backward_data(y.data(), w.data(), x.data()); };
      if (r.pass == ConvPass::kBackwardFilter)
        call = [&] { conv.backward_filter(x.data(), y.data(), w.data()); };
      return {time(call, "im2col+eigen-gemm")};
    }
    case KernelKind::kElementwise: {
      // Above elementwise_piece_ elements the buffers are one piece's, reused (element_pieces).
      const ElementPieces pieces = element_pieces(checked_elements(r), elementwise_piece_);
      Vec x = Vec::Random(pieces.piece), dy = Vec::Random(pieces.piece), y(pieces.piece);
      const auto over_pieces = [&](auto&& one) {
        return [&pieces, one] {
          for (std::int64_t i = 0; i < pieces.full; ++i) one(pieces.piece);
          if (pieces.tail > 0) one(pieces.tail);
        };
      };
      const std::string suffix =
          pieces.calls() > 1 ? fmt::format(" ({} pieces)", pieces.calls()) : std::string();
      if (!r.backward)
        return {time(over_pieces([&](std::int64_t n) { y.head(n) = x.head(n).cwiseMax(0.0f); }),
                     "eigen-relu" + suffix)};
      return {time(over_pieces([&](std::int64_t n) {
                     y.head(n) = (x.head(n).array() > 0.0f).select(dy.head(n), 0.0f);
                   }),
                   "eigen-relu-bwd" + suffix)};
    }
    case KernelKind::kNormalization: {
      // Batch-norm training over a C × (elements/C) view: per-channel mean and variance, then
      // normalise (forward) or the three-term gradient (backward).
      const std::int64_t c = std::max<std::int64_t>(r.channels, 1);
      const std::int64_t cols = std::max<std::int64_t>(checked_elements(r) / c, 1);
      RowMat x = RowMat::Random(c, cols), dy = RowMat::Random(c, cols), y(c, cols);
      const float inv = 1.0f / static_cast<float>(cols);
      if (!r.backward)
        return {time(
            [&] {
              const Vec mean = x.rowwise().sum() * inv;
              y = x.colwise() - mean;
              const Vec rstd =
                  ((y.array().square().rowwise().sum() * inv) + 1e-5f).rsqrt().matrix();
              y = rstd.asDiagonal() * y;
            },
            "eigen-batchnorm")};
      return {time(
          [&] {
            // dx = rstd·(dy − mean(dy) − x̂·mean(dy·x̂)) per channel.
            const Vec mean = x.rowwise().sum() * inv;
            y = x.colwise() - mean;
            const Vec rstd = ((y.array().square().rowwise().sum() * inv) + 1e-5f).rsqrt().matrix();
            y = rstd.asDiagonal() * y;
            const Vec mean_dy = dy.rowwise().sum() * inv;
            const Vec mean_dy_xhat = (dy.array() * y.array()).rowwise().sum().matrix() * inv;
            y = rstd.asDiagonal() * ((dy.colwise() - mean_dy) - mean_dy_xhat.asDiagonal() * y);
          },
          "eigen-batchnorm-bwd")};
    }
    case KernelKind::kPooling: {
      const auto& p = r.conv;
      const std::int64_t oh = conv_output_h(p), ow = conv_output_w(p), planes = p.n * p.c;
      std::vector<float> x(static_cast<std::size_t>(planes * p.h * p.w)),
          y(static_cast<std::size_t>(planes * oh * ow));
      fill(x);
      auto call = [&] {
        for (std::int64_t pl = 0; pl < planes; ++pl)
          for (std::int64_t i = 0; i < oh; ++i)
            for (std::int64_t j = 0; j < ow; ++j) {
              float m = -INFINITY;
              for (std::int64_t a = 0; a < p.r; ++a)
                for (std::int64_t b = 0; b < p.s; ++b) {
                  const std::int64_t ih = i * p.stride_h - p.pad_h + a,
                                     iw = j * p.stride_w - p.pad_w + b;
                  if (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w)
                    m = std::max(m, x[static_cast<std::size_t>((pl * p.h + ih) * p.w + iw)]);
                }
              y[static_cast<std::size_t>((pl * oh + i) * ow + j)] = m;
            }
      };
      return {time(call, "direct-maxpool")};
    }
    case KernelKind::kSoftmax: {
      const std::int64_t cols = std::max<std::int64_t>(r.channels, 1);
      const std::int64_t rows = std::max<std::int64_t>(checked_elements(r) / cols, 1);
      RowMat x = RowMat::Random(rows, cols), y(rows, cols);
      return {time(
          [&] {
            y = (x.colwise() - x.rowwise().maxCoeff()).array().exp().matrix();
            y = y.array().colwise() / y.rowwise().sum().array();
          },
          "eigen-softmax")};
    }
    case KernelKind::kMemcpy: {
      std::vector<char> src(static_cast<std::size_t>(r.size_bytes), 1), dst(src.size());
      return {time([&] { std::memcpy(dst.data(), src.data(), src.size()); }, "memcpy")};
    }
    case KernelKind::kFileRead: {
      std::vector<char> buf(std::size_t{1} << 20);
      auto call = [&] {
        const int fd = ::open(r.file_path.c_str(), O_RDONLY);
        if (fd < 0) throw std::runtime_error("cpu: cannot open " + r.file_path);
        // Ask the kernel to drop cached pages so the read goes to the device where it can.
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        std::int64_t left = r.size_bytes;
        while (left > 0) {
          const auto got = ::read(fd, buf.data(), std::min<std::int64_t>(left, buf.size()));
          if (got <= 0) break;
          left -= got;
        }
        ::close(fd);
        if (left > 0) throw std::runtime_error("cpu: " + r.file_path + " is shorter than asked");
      };
      // Waiting for the device is the cost here, not CPU work: always the wall clock.
      return {time(call, "read-1MiB", /*wall_clock=*/true)};
    }
    case KernelKind::kCollective:
      break;
  }
  throw std::invalid_argument(fmt::format("cpu: cannot measure {}", describe(r)));
}

std::unique_ptr<KernelBackend> make_cpu_backend(const TimingOptions& timing) {
  return std::make_unique<CpuBackend>(timing);
}

}  // namespace scalecast::kernels
