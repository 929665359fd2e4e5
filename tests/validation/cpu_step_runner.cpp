#include "tests/validation/cpu_step_runner.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "calibration/calibration_runner.hpp"
#include "calibration/measurement_key.hpp"
#include "kernels/cpu_backend.hpp"
#include "kernels/cpu_conv.hpp"

namespace scalecast::validation::testing {
namespace {

using Mat = Eigen::MatrixXf;
using Vec = Eigen::VectorXf;
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using kernels::KernelKind;
using kernels::KernelRequest;

// One op ready to run, then the same computation as the CPU backend times for this request.
struct PreparedOp {
  std::string name;
  std::string op_class;
  std::function<void()> run;
};

// Activations and gradients live in three arenas shared by all ops (a framework's caching
// allocator hands recently freed blocks back out): every op reads its input tensors from `in`
// and `in2` and writes its output to `out`. So each op finds its inputs where the previous op
// left cache-warm data, as in a real step where an op consumes its producer's fresh output, and
// as in the calibration, which times an op on buffers its previous call touched. With private
// buffers per op, every input was last touched a whole step earlier and came from memory
// (batch-norm 30-40% and pooling 20-35% slower than calibrated, more so under load). Inputs are
// written once and only read, so the data stays finite; weights stay private per op.
struct Arenas {
  std::vector<float> in, in2, out;
  std::vector<float> conv_workspace;  // im2col scratch shared by every convolution
};

struct Needs {
  std::size_t in = 0, in2 = 0, out = 0;  // floats
};

std::size_t sz(std::int64_t n) { return static_cast<std::size_t>(std::max<std::int64_t>(n, 1)); }

Needs needs(const KernelRequest& r) {
  switch (r.kind) {
    case KernelKind::kGemm: {
      const auto& g = r.gemm;
      return {sz(g.m * g.k), sz(g.k * g.n), sz(g.m * g.n)};
    }
    case KernelKind::kConv: {
      const kernels::CpuConv conv(r.conv);
      if (r.pass == kernels::ConvPass::kForward) return {conv.x_size(), 0, conv.y_size()};
      if (r.pass == kernels::ConvPass::kBackwardData) return {conv.y_size(), 0, conv.x_size()};
      return {conv.x_size(), conv.y_size(), conv.w_size()};
    }
    case KernelKind::kPooling: {
      const auto& p = r.conv;
      const std::int64_t oh = (p.h + 2 * p.pad_h - p.r) / p.stride_h + 1;
      const std::int64_t ow = (p.w + 2 * p.pad_w - p.s) / p.stride_w + 1;
      return {sz(p.n * p.c * p.h * p.w), 0, sz(p.n * p.c * oh * ow)};
    }
    case KernelKind::kMemcpy:
      return {sz((r.size_bytes + 3) / 4), 0, sz((r.size_bytes + 3) / 4)};
    case KernelKind::kNormalization: {
      const std::int64_t c = std::max<std::int64_t>(r.channels, 1);
      const std::int64_t n = c * std::max<std::int64_t>(r.elements / c, 1);
      return {sz(n), sz(n), sz(n)};
    }
    case KernelKind::kSoftmax: {
      const std::int64_t cols = std::max<std::int64_t>(r.channels, 1);
      const std::int64_t n = cols * std::max<std::int64_t>(r.elements / cols, 1);
      return {sz(n), 0, sz(n)};
    }
    default:
      return {sz(r.elements), sz(r.elements), sz(r.elements)};
  }
}

std::function<void()> prepare(const KernelRequest& r, Arenas& arena) {
  float* const in = arena.in.data();
  float* const in2 = arena.in2.data();
  float* const out = arena.out.data();
  switch (r.kind) {
    case KernelKind::kGemm: {
      const auto& g = r.gemm;
      const Eigen::Map<const Mat> a(in, g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k);
      const Eigen::Map<const Mat> b(in2, g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n);
      Eigen::Map<Mat> c(out, g.m, g.n);
      return [a, b, c, g]() mutable {
        for (std::int64_t i = 0; i < g.batch; ++i) {
          if (!g.trans_a && !g.trans_b) c.noalias() = a * b;
          if (g.trans_a && !g.trans_b) c.noalias() = a.transpose() * b;
          if (!g.trans_a && g.trans_b) c.noalias() = a * b.transpose();
          if (g.trans_a && g.trans_b) c.noalias() = a.transpose() * b.transpose();
        }
      };
    }
    case KernelKind::kConv: {
      auto conv = std::make_shared<kernels::CpuConv>(r.conv);
      conv->use_workspace(arena.conv_workspace.data(), arena.conv_workspace.size());
      auto w = std::make_shared<std::vector<float>>(conv->w_size(), 0.05f);
      if (r.pass == kernels::ConvPass::kForward) return [=] { conv->forward(in, w->data(), out); };
      if (r.pass == kernels::ConvPass::kBackwardData)
        return [=] { conv->backward_data(in, w->data(), out); };
      return [=] { conv->backward_filter(in, in2, out); };
    }
    case KernelKind::kNormalization: {
      const std::int64_t c = std::max<std::int64_t>(r.channels, 1);
      const std::int64_t cols = std::max<std::int64_t>(r.elements / c, 1);
      const Eigen::Map<const RowMat> x(in, c, cols);
      const Eigen::Map<const RowMat> dy(in2, c, cols);
      Eigen::Map<RowMat> y(out, c, cols);
      const float inv = 1.0f / static_cast<float>(cols);
      const bool backward = r.backward;
      return [=]() mutable {
        const Vec mean = x.rowwise().sum() * inv;
        y = x.colwise() - mean;
        const Vec rstd = ((y.array().square().rowwise().sum() * inv) + 1e-5f).rsqrt().matrix();
        y = rstd.asDiagonal() * y;
        if (!backward) return;
        const Vec mean_dy = dy.rowwise().sum() * inv;
        const Vec mean_dy_xhat = (dy.array() * y.array()).rowwise().sum().matrix() * inv;
        y = rstd.asDiagonal() * ((dy.colwise() - mean_dy) - mean_dy_xhat.asDiagonal() * y);
      };
    }
    case KernelKind::kPooling: {
      const auto p = r.conv;
      const std::int64_t oh = (p.h + 2 * p.pad_h - p.r) / p.stride_h + 1;
      const std::int64_t ow = (p.w + 2 * p.pad_w - p.s) / p.stride_w + 1;
      const std::int64_t planes = p.n * p.c;
      return [=] {
        for (std::int64_t pl = 0; pl < planes; ++pl)
          for (std::int64_t i = 0; i < oh; ++i)
            for (std::int64_t j = 0; j < ow; ++j) {
              float m = -INFINITY;
              for (std::int64_t a = 0; a < p.r; ++a)
                for (std::int64_t b = 0; b < p.s; ++b) {
                  const std::int64_t ih = i * p.stride_h - p.pad_h + a;
                  const std::int64_t iw = j * p.stride_w - p.pad_w + b;
                  if (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w)
                    m = std::max(m, in[static_cast<std::size_t>((pl * p.h + ih) * p.w + iw)]);
                }
              out[static_cast<std::size_t>((pl * oh + i) * ow + j)] = m;
            }
      };
    }
    case KernelKind::kSoftmax: {
      const std::int64_t cols = std::max<std::int64_t>(r.channels, 1);
      const std::int64_t rows = std::max<std::int64_t>(r.elements / cols, 1);
      const Eigen::Map<const RowMat> x(in, rows, cols);
      Eigen::Map<RowMat> y(out, rows, cols);
      return [=]() mutable {
        y = (x.colwise() - x.rowwise().maxCoeff()).array().exp().matrix();
        y = y.array().colwise() / y.rowwise().sum().array();
      };
    }
    case KernelKind::kMemcpy: {
      const auto bytes = static_cast<std::size_t>(r.size_bytes);
      return [=] { std::memcpy(out, in, bytes); };
    }
    case KernelKind::kElementwise: {
      const Eigen::Map<const Vec> x(in, r.elements);
      const Eigen::Map<const Vec> dy(in2, r.elements);
      Eigen::Map<Vec> y(out, r.elements);
      if (!r.backward) return [=]() mutable { y = x.cwiseMax(0.0f); };
      return [=]() mutable { y = (x.array() > 0.0f).select(dy, 0.0f); };
    }
    default:
      break;
  }
  throw std::invalid_argument("cpu loop: no CPU kernel for this op");
}

// One op execution: start and end on both clocks, in seconds since the loop's origin (wall) or
// since the start of its run plus the CPU time of the earlier runs (CPU).
struct OpRecord {
  int step = 0;
  std::size_t op = 0;
  double wall_start_s = 0.0, wall_end_s = 0.0, cpu_start_s = 0.0, cpu_end_s = 0.0;
};

struct StepRecord {
  CpuStepTiming timing;
  double wall_start_s = 0.0, cpu_start_s = 0.0;
};

}  // namespace

struct CpuTrainingLoop::Impl {
  std::string device;
  Arenas arena;
  std::vector<PreparedOp> ops;
  std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now();
  double cpu_elapsed_s = 0.0;  // CPU time of the earlier runs' worker threads
  int next_step = 0;
  std::vector<OpRecord> op_records;
  std::vector<StepRecord> step_records;
  std::vector<CpuStepTiming> steps;
  std::vector<std::vector<double>> isolated_s;  // per op: its isolated samples (time_isolated)

  std::string trace(bool cpu_clock) const;
};

CpuTrainingLoop::CpuTrainingLoop(const models::TrainingStep& step, const std::string& device)
    : impl_(std::make_unique<Impl>()) {
  if (Eigen::nbThreads() != 1)
    throw std::invalid_argument("cpu loop: Eigen runs " + std::to_string(Eigen::nbThreads()) +
                                " threads; the loop and its calibration are single-threaded");
  impl_->device = device;
  std::vector<kernels::KernelRequest> requests;
  Needs most;
  std::size_t most_cols = 1;
  for (const models::Op& op : step.ops()) {
    requests.push_back(calibration::request_for(calibration::key_for(op, device)));
    const Needs n = needs(requests.back());
    most = {std::max(most.in, n.in), std::max(most.in2, n.in2), std::max(most.out, n.out)};
    if (requests.back().kind == KernelKind::kConv)
      most_cols = std::max(most_cols, kernels::CpuConv(requests.back().conv).col_size());
  }
  impl_->arena.conv_workspace.assign(most_cols, 0.0f);
  // Uniform in [-1, 1] like the CPU backend's Eigen buffers: the time of some kernels depends on
  // the data (ReLU's backward select on the sign mispredicts branches on random signs).
  const auto fill = [](std::vector<float>& v, std::size_t n) {
    v.resize(n);
    Eigen::Map<Vec>(v.data(), static_cast<Eigen::Index>(n)) =
        Vec::Random(static_cast<Eigen::Index>(n));
  };
  fill(impl_->arena.in, most.in);
  fill(impl_->arena.in2, std::max<std::size_t>(most.in2, 1));
  impl_->arena.out.assign(most.out, 0.0f);
  for (std::size_t i = 0; i < requests.size(); ++i)
    impl_->ops.push_back({step.ops()[i].name,
                          std::string(models::to_string(step.ops()[i].op_class)),
                          prepare(requests[i], impl_->arena)});
}

CpuTrainingLoop::~CpuTrainingLoop() = default;

void CpuTrainingLoop::run(int warmup, int profiled) {
  using Clock = std::chrono::steady_clock;
  Impl& d = *impl_;
  const auto wall = [&](Clock::time_point t) {
    return std::chrono::duration<double>(t - d.origin).count();
  };
  // Records go into storage reserved up front, so recording costs two clock reads per op and
  // no allocation inside a step; the JSON is built afterwards.
  d.op_records.reserve(d.op_records.size() + static_cast<std::size_t>(profiled) * d.ops.size());
  // The step runs on its own thread, as a framework's compute stream would; this thread only
  // waits for it.
  std::thread worker([&] {
    const double cpu0 = kernels::thread_cpu_time_s();
    const auto cpu = [&] { return d.cpu_elapsed_s + kernels::thread_cpu_time_s() - cpu0; };
    for (int i = 0; i < warmup; ++i, ++d.next_step)
      for (const PreparedOp& op : d.ops) op.run();
    for (int i = 0; i < profiled; ++i, ++d.next_step) {
      StepRecord step;
      step.timing.step = d.next_step;
      step.wall_start_s = wall(Clock::now());
      step.cpu_start_s = cpu();
      for (std::size_t k = 0; k < d.ops.size(); ++k) {
        OpRecord r;
        r.step = d.next_step;
        r.op = k;
        r.wall_start_s = wall(Clock::now());
        r.cpu_start_s = cpu();
        d.ops[k].run();
        r.cpu_end_s = cpu();
        r.wall_end_s = wall(Clock::now());
        d.op_records.push_back(r);
      }
      const double cpu_end_s = cpu();
      step.timing.wall_s = wall(Clock::now()) - step.wall_start_s;
      step.timing.cpu_s = cpu_end_s - step.cpu_start_s;
      d.step_records.push_back(step);
      d.steps.push_back(step.timing);
    }
    d.cpu_elapsed_s = cpu();
  });
  worker.join();
}

void CpuTrainingLoop::time_isolated(int reps) {
  if (reps < 1)
    throw std::invalid_argument("cpu loop: time_isolated needs at least one timed call");
  Impl& d = *impl_;
  d.isolated_s.resize(d.ops.size());
  std::thread worker([&] {
    for (std::size_t k = 0; k < d.ops.size(); ++k) {
      d.ops[k].run();
      for (int i = 0; i < reps; ++i) {
        const double t0 = kernels::thread_cpu_time_s();
        d.ops[k].run();
        d.isolated_s[k].push_back(kernels::thread_cpu_time_s() - t0);
      }
    }
  });
  worker.join();
}

double CpuTrainingLoop::isolated_step_s() const {
  if (impl_->isolated_s.empty())
    throw std::logic_error("cpu loop: isolated_step_s before time_isolated");
  double total = 0.0;
  for (std::vector<double> v : impl_->isolated_s) {  // a copy: nth_element reorders it
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    total += *mid;
  }
  return total;
}

std::string CpuTrainingLoop::Impl::trace(bool cpu_clock) const {
  const auto us = [](double s) { return s * 1e6; };
  nlohmann::json events = nlohmann::json::array();
  std::size_t next_op = 0;
  for (const StepRecord& s : step_records) {
    for (; next_op < op_records.size() && op_records[next_op].step == s.timing.step; ++next_op) {
      const OpRecord& r = op_records[next_op];
      const double start = cpu_clock ? r.cpu_start_s : r.wall_start_s;
      const double end = cpu_clock ? r.cpu_end_s : r.wall_end_s;
      events.push_back({{"ph", "X"},
                        {"cat", "kernel"},
                        {"name", ops[r.op].name},
                        {"pid", 0},
                        {"tid", 7},
                        {"ts", us(start)},
                        {"dur", us(end) - us(start)},
                        {"args", {{"stream", 7}}}});
    }
    const double start = cpu_clock ? s.cpu_start_s : s.wall_start_s;
    const double dur = cpu_clock ? s.timing.cpu_s : s.timing.wall_s;
    events.push_back({{"ph", "X"},
                      {"cat", "user_annotation"},
                      {"name", "ProfilerStep#" + std::to_string(s.timing.step)},
                      {"pid", 1},
                      {"tid", 1},
                      {"ts", us(start)},
                      {"dur", us(dur)}});
  }
  nlohmann::json trace = {
      {"schemaVersion", 1},
      {"deviceProperties", {{{"id", 0}, {"name", device}}}},
      {"traceName", std::string("scalecast cpu training loop, ") +
                        (cpu_clock ? "worker thread CPU clock (CLOCK_THREAD_CPUTIME_ID)"
                                   : "wall clock (steady_clock)")},
      {"displayTimeUnit", "ms"},
      {"traceEvents", events}};
  return trace.dump(1);
}

std::string CpuTrainingLoop::wall_trace_json() const { return impl_->trace(false); }
std::string CpuTrainingLoop::cpu_trace_json() const { return impl_->trace(true); }
const std::vector<CpuStepTiming>& CpuTrainingLoop::steps() const { return impl_->steps; }

std::vector<std::string> CpuTrainingLoop::op_names() const {
  std::vector<std::string> names;
  for (const PreparedOp& op : impl_->ops) names.push_back(op.name);
  return names;
}

}  // namespace scalecast::validation::testing
