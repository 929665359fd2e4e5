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

}  // namespace

CpuLoopResult run_cpu_training_loop(const models::TrainingStep& step, const std::string& device,
                                    int iterations) {
  std::vector<PreparedOp> ops;
  for (const models::Op& op : step.ops()) {
    const calibration::MeasurementKey key = calibration::key_for(op, device);
    ops.push_back({op.name, std::string(models::to_string(op.op_class)),
                   prepare(calibration::request_for(key))});
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  auto us = [&](Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - t0).count();
  };
  nlohmann::json events = nlohmann::json::array();
  CpuLoopResult result;
  for (const PreparedOp& op : ops) result.op_names.push_back(op.name);
  // The step runs on its own thread, as a framework's compute stream would; the host thread
  // only waits for it.
  std::thread worker([&] {
    for (int it = 0; it < iterations; ++it) {
      const Clock::time_point s0 = Clock::now();
      for (const PreparedOp& op : ops) {
        const Clock::time_point a = Clock::now();
        op.run();
        const Clock::time_point b = Clock::now();
        events.push_back({{"ph", "X"},
                          {"cat", "kernel"},
                          {"name", op.name},
                          {"pid", 0},
                          {"tid", 7},
                          {"ts", us(a)},
                          {"dur", us(b) - us(a)},
                          {"args", {{"stream", 7}}}});
      }
      const Clock::time_point s1 = Clock::now();
      events.push_back({{"ph", "X"},
                        {"cat", "user_annotation"},
                        {"name", "ProfilerStep#" + std::to_string(it)},
                        {"pid", 1},
                        {"tid", 1},
                        {"ts", us(s0)},
                        {"dur", us(s1) - us(s0)}});
      result.iteration_s.push_back(std::chrono::duration<double>(s1 - s0).count());
    }
  });
  worker.join();
  nlohmann::json trace = {{"schemaVersion", 1},
                          {"deviceProperties", {{{"id", 0}, {"name", device}}}},
                          {"traceName", "scalecast cpu training loop"},
                          {"displayTimeUnit", "ms"},
                          {"traceEvents", events}};
  result.trace_json = trace.dump(1);
  return result;
}

}  // namespace scalecast::validation::testing
