#include "tests/validation/cpu_step_runner.hpp"

#include <Eigen/Dense>
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

// One op ready to run: buffers allocated once (a framework's caching allocator), then the same
// computation as the CPU backend times for this request.
struct PreparedOp {
  std::string name;
  std::string op_class;
  std::function<void()> run;
};

std::function<void()> prepare(const KernelRequest& r) {
  switch (r.kind) {
    case KernelKind::kGemm: {
      const auto& g = r.gemm;
      auto a = std::make_shared<Mat>(Mat::Random(g.trans_a ? g.k : g.m, g.trans_a ? g.m : g.k));
      auto b = std::make_shared<Mat>(Mat::Random(g.trans_b ? g.n : g.k, g.trans_b ? g.k : g.n));
      auto c = std::make_shared<Mat>(Mat::Zero(g.m, g.n));
      return [a, b, c, g] {
        for (std::int64_t i = 0; i < g.batch; ++i) {
          if (!g.trans_a && !g.trans_b) c->noalias() = *a * *b;
          if (g.trans_a && !g.trans_b) c->noalias() = a->transpose() * *b;
          if (!g.trans_a && g.trans_b) c->noalias() = *a * b->transpose();
          if (g.trans_a && g.trans_b) c->noalias() = a->transpose() * b->transpose();
        }
      };
    }
    case KernelKind::kConv: {
      auto conv = std::make_shared<kernels::CpuConv>(r.conv);
      auto x = std::make_shared<std::vector<float>>(conv->x_size(), 0.5f);
      auto w = std::make_shared<std::vector<float>>(conv->w_size(), 0.05f);
      auto y = std::make_shared<std::vector<float>>(conv->y_size(), 0.25f);
      if (r.pass == kernels::ConvPass::kForward)
        return [=] { conv->forward(x->data(), w->data(), y->data()); };
      if (r.pass == kernels::ConvPass::kBackwardData)
        return [=] { conv->backward_data(y->data(), w->data(), x->data()); };
      return [=] { conv->backward_filter(x->data(), y->data(), w->data()); };
    }
    case KernelKind::kNormalization: {
      const std::int64_t c = std::max<std::int64_t>(r.channels, 1);
      const std::int64_t cols = std::max<std::int64_t>(r.elements / c, 1);
      auto x = std::make_shared<RowMat>(RowMat::Random(c, cols));
      auto dy = std::make_shared<RowMat>(RowMat::Random(c, cols));
      auto y = std::make_shared<RowMat>(c, cols);
      const float inv = 1.0f / static_cast<float>(cols);
      const bool backward = r.backward;
      return [=] {
        const Vec mean = x->rowwise().sum() * inv;
        *y = x->colwise() - mean;
        const Vec rstd = ((y->array().square().rowwise().sum() * inv) + 1e-5f).rsqrt().matrix();
        *y = rstd.asDiagonal() * *y;
        if (!backward) return;
        const Vec mean_dy = dy->rowwise().sum() * inv;
        const Vec mean_dy_xhat = (dy->array() * y->array()).rowwise().sum().matrix() * inv;
        *y = rstd.asDiagonal() * ((dy->colwise() - mean_dy) - mean_dy_xhat.asDiagonal() * *y);
      };
    }
    case KernelKind::kPooling: {
      const auto p = r.conv;
      const std::int64_t oh = (p.h + 2 * p.pad_h - p.r) / p.stride_h + 1;
      const std::int64_t ow = (p.w + 2 * p.pad_w - p.s) / p.stride_w + 1;
      const std::int64_t planes = p.n * p.c;
      auto x = std::make_shared<std::vector<float>>(planes * p.h * p.w, 0.5f);
      auto y = std::make_shared<std::vector<float>>(planes * oh * ow);
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
                    m = std::max(m, (*x)[static_cast<std::size_t>((pl * p.h + ih) * p.w + iw)]);
                }
              (*y)[static_cast<std::size_t>((pl * oh + i) * ow + j)] = m;
            }
      };
    }
    case KernelKind::kSoftmax: {
      const std::int64_t cols = std::max<std::int64_t>(r.channels, 1);
      const std::int64_t rows = std::max<std::int64_t>(r.elements / cols, 1);
      auto x = std::make_shared<RowMat>(RowMat::Random(rows, cols));
      auto y = std::make_shared<RowMat>(rows, cols);
      return [=] {
        *y = (x->colwise() - x->rowwise().maxCoeff()).array().exp().matrix();
        *y = y->array().colwise() / y->rowwise().sum().array();
      };
    }
    case KernelKind::kMemcpy: {
      auto src = std::make_shared<std::vector<char>>(static_cast<std::size_t>(r.size_bytes), 1);
      auto dst = std::make_shared<std::vector<char>>(src->size());
      return [=] { std::memcpy(dst->data(), src->data(), src->size()); };
    }
    case KernelKind::kElementwise: {
      auto x = std::make_shared<Vec>(Vec::Random(r.elements));
      auto dy = std::make_shared<Vec>(Vec::Random(r.elements));
      auto y = std::make_shared<Vec>(r.elements);
      if (!r.backward) return [=] { *y = x->cwiseMax(0.0f); };
      return [=] { *y = (x->array() > 0.0f).select(*dy, 0.0f); };
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
  std::vector<PreparedOp> ops;
  std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now();
  double cpu_elapsed_s = 0.0;  // CPU time of the earlier runs' worker threads
  int next_step = 0;
  std::vector<OpRecord> op_records;
  std::vector<StepRecord> step_records;
  std::vector<CpuStepTiming> steps;

  std::string trace(bool cpu_clock) const;
};

CpuTrainingLoop::CpuTrainingLoop(const models::TrainingStep& step, const std::string& device)
    : impl_(std::make_unique<Impl>()) {
  if (Eigen::nbThreads() != 1)
    throw std::invalid_argument("cpu loop: Eigen runs " + std::to_string(Eigen::nbThreads()) +
                                " threads; the loop and its calibration are single-threaded");
  impl_->device = device;
  for (const models::Op& op : step.ops()) {
    const calibration::MeasurementKey key = calibration::key_for(op, device);
    impl_->ops.push_back({op.name, std::string(models::to_string(op.op_class)),
                          prepare(calibration::request_for(key))});
  }
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
