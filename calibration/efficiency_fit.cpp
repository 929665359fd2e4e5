#include "calibration/efficiency_fit.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace scalecast::calibration {

std::vector<double> RateFit::standardised(const std::vector<double>& vars) const {
  std::vector<double> z(vars.size());
  for (std::size_t i = 0; i < vars.size(); ++i)
    z[i] = (std::clamp(vars[i], lo_[i], hi_[i]) - mean_[i]) / scale_[i];
  return z;
}

std::vector<double> RateFit::features(const std::vector<double>& vars) const {
  // Quadratic in the standardised, range-clamped variables.
  const std::vector<double> z = standardised(vars);
  std::vector<double> f{1.0};
  for (double v : z) f.push_back(v);
  for (std::size_t i = 0; i < quadratic_; ++i)
    for (std::size_t j = i; j < quadratic_; ++j) f.push_back(z[i] * z[j]);
  return f;
}

RateFit RateFit::fit(const std::vector<RateSample>& samples, std::size_t quadratic, double ridge,
                     double smoothing_bandwidth) {
  if (samples.empty()) throw std::invalid_argument("fit: no samples");
  const std::size_t nv = samples.front().vars.size();
  quadratic = std::min(quadratic, nv);
  const std::size_t nf = 1 + nv + quadratic * (quadratic + 1) / 2;
  if (samples.size() < nf)
    throw std::invalid_argument(
        fmt::format("fit: {} samples for {} coefficients", samples.size(), nf));
  RateFit f;
  f.quadratic_ = quadratic;
  f.min_rate_ = INFINITY;
  for (const auto& s : samples) {
    f.min_rate_ = std::min(f.min_rate_, s.rate);
    f.max_rate_ = std::max(f.max_rate_, s.rate);
  }
  f.points_ = static_cast<int>(samples.size());
  f.mean_.assign(nv, 0.0);
  f.scale_.assign(nv, 0.0);
  f.lo_.assign(nv, INFINITY);
  f.hi_.assign(nv, -INFINITY);
  for (const auto& s : samples) {
    if (s.vars.size() != nv || !(s.rate > 0) || !std::isfinite(s.rate))
      throw std::invalid_argument(
          "fit: samples need the same variables and a finite positive rate");
    for (std::size_t i = 0; i < nv; ++i) {
      if (!std::isfinite(s.vars[i]))
        throw std::invalid_argument("fit: a sample has a non-finite variable");
      f.mean_[i] += s.vars[i] / samples.size();
      f.lo_[i] = std::min(f.lo_[i], s.vars[i]);
      f.hi_[i] = std::max(f.hi_[i], s.vars[i]);
    }
  }
  for (const auto& s : samples)
    for (std::size_t i = 0; i < nv; ++i)
      f.scale_[i] += (s.vars[i] - f.mean_[i]) * (s.vars[i] - f.mean_[i]) / samples.size();
  for (auto& sc : f.scale_) sc = sc > 0 ? std::sqrt(sc) : 1.0;
  Eigen::MatrixXd phi(samples.size(), nf);
  Eigen::VectorXd y(samples.size());
  for (std::size_t r = 0; r < samples.size(); ++r) {
    const auto row = f.features(samples[r].vars);
    for (std::size_t c = 0; c < nf; ++c) phi(r, c) = row[c];
    y(r) = std::log(samples[r].rate);
  }
  Eigen::MatrixXd a = phi.transpose() * phi;
  for (std::size_t c = 1; c < nf; ++c) a(c, c) += ridge * samples.size();
  const Eigen::VectorXd beta = a.ldlt().solve(phi.transpose() * y);
  f.beta_.assign(beta.data(), beta.data() + beta.size());
  // Degenerate data (rates spanning more than a double's range) gives no usable curve: the group
  // falls to the next tier rather than pricing ops at NaN.
  for (double b : f.beta_)
    if (!std::isfinite(b))
      throw std::invalid_argument("fit: the least-squares solution is not finite");
  const Eigen::VectorXd resid = phi * beta - y;
  f.rms_log_error_ = std::sqrt(resid.squaredNorm() / samples.size());
  if (smoothing_bandwidth > 0) {
    f.bandwidth_ = smoothing_bandwidth;
    for (std::size_t r = 0; r < samples.size(); ++r) {
      f.train_z_.push_back(f.standardised(samples[r].vars));
      f.residual_.push_back(-resid(static_cast<Eigen::Index>(r)));
    }
  }
  return f;
}

double RateFit::rate(const std::vector<double>& vars) const {
  if (vars.size() != mean_.size()) throw std::invalid_argument("fit: wrong number of variables");
  const auto f = features(vars);
  double s = 0.0;
  for (std::size_t i = 0; i < f.size(); ++i) s += f[i] * beta_[i];
  if (bandwidth_ > 0) {
    const auto z = standardised(vars);
    double wsum = 1.0, rsum = 0.0;  // prior weight 1 on a zero correction
    for (std::size_t t = 0; t < train_z_.size(); ++t) {
      double d2 = 0.0;
      for (std::size_t i = 0; i < z.size(); ++i)
        d2 += (z[i] - train_z_[t][i]) * (z[i] - train_z_[t][i]);
      const double w = std::exp(-0.5 * d2 / (bandwidth_ * bandwidth_));
      wsum += w;
      rsum += w * residual_[t];
    }
    s += rsum / wsum;
  }
  return std::clamp(std::exp(s), min_rate_, max_rate_);
}

AlphaBetaFit AlphaBetaFit::fit(const std::vector<double>& bytes, const std::vector<double>& t) {
  if (bytes.size() != t.size() || bytes.size() < 2)
    throw std::invalid_argument("alpha-beta fit: needs two or more (size, time) points");
  // Minimise Σ((α + γ·S − t)/t)²: rows [1/t, S/t] · (α, γ) = 1.
  Eigen::MatrixXd a(bytes.size(), 2);
  Eigen::VectorXd y = Eigen::VectorXd::Ones(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (!(t[i] > 0) || !std::isfinite(t[i]) || !(bytes[i] > 0) || !std::isfinite(bytes[i]))
      throw std::invalid_argument("alpha-beta fit: sizes and times must be finite and positive");
    a(i, 0) = 1.0 / t[i];
    a(i, 1) = bytes[i] / t[i];
  }
  Eigen::Vector2d x = a.colPivHouseholderQr().solve(y);
  AlphaBetaFit f;
  f.points = static_cast<int>(bytes.size());
  if (x(1) <= 0) {  // no bandwidth term resolvable: pure bandwidth through the largest point
    const auto i = std::max_element(bytes.begin(), bytes.end()) - bytes.begin();
    x = {0.0, t[i] / bytes[i]};
  }
  f.alpha_s = std::max(x(0), 0.0);
  f.beta_Bps = 1.0 / x(1);
  if (!std::isfinite(f.alpha_s) || !std::isfinite(f.beta_Bps) || !(f.beta_Bps > 0))
    throw std::invalid_argument("alpha-beta fit: the fitted line is not finite");
  return f;
}

}  // namespace scalecast::calibration
