#pragma once
// Fitted efficiency curves (docs/architecture.md, "Compute costs", tier 3). A RateFit predicts the
// achieved rate of a kernel (FLOP/s for compute classes, bytes/s for memory-bound ones) from a few
// log-scale variables of its size — ln FLOPs and ln arithmetic intensity for GEMM/conv — as a
// quadratic in the standardised variables, fitted by ridge-regularised least squares (Eigen) on one
// device's measurements. Dividing by the datasheet peak gives the efficiency curve e(size).
// Inputs outside the fitted range are clamped to it, so the curve never extrapolates.
// An AlphaBetaFit is t(S) = α + S/β for copies and collectives (nccl-tests practice, §1 rule 2).

#include <string>
#include <vector>

namespace scalecast::calibration {

struct RateSample {
  std::vector<double> vars;  // the base variables (already log-scaled)
  double rate = 0.0;         // achieved FLOP/s or bytes/s
};

class RateFit {
 public:
  RateFit() = default;
  // Throws std::invalid_argument with fewer samples than coefficients or non-positive rates.
  // The first `quadratic` variables enter as a full quadratic, the rest linearly. With
  // `smoothing_bandwidth` > 0 the prediction adds a Gaussian-kernel average of the training
  // residuals (log space, standardised variables), shrunk toward zero by a prior weight of 1:
  // a parametric trend plus local correction, which follows cuDNN's algorithm regimes better
  // than any low-order polynomial.
  static RateFit fit(const std::vector<RateSample>& samples, std::size_t quadratic,
                     double ridge = 1e-3, double smoothing_bandwidth = 0.0);

  // Predicted rate: inputs clamped to the fitted range, output to the measured rates' range
  // (a quadratic can overshoot between data points; no prediction beats the best measurement).
  double rate(const std::vector<double>& vars) const;
  int points() const { return points_; }
  double rms_log_error() const { return rms_log_error_; }  // on the fitted samples
  std::size_t variables() const { return mean_.size(); }
  const std::vector<double>& coefficients() const { return beta_; }
  double lo(std::size_t i) const { return lo_[i]; }
  double hi(std::size_t i) const { return hi_[i]; }

 private:
  std::vector<double> standardised(const std::vector<double>& vars) const;
  std::vector<double> features(const std::vector<double>& vars) const;
  std::vector<double> mean_, scale_, lo_, hi_, beta_;
  std::size_t quadratic_ = 0;
  double min_rate_ = 0.0, max_rate_ = 0.0;
  double bandwidth_ = 0.0;
  std::vector<std::vector<double>> train_z_;
  std::vector<double> residual_;
  int points_ = 0;
  double rms_log_error_ = 0.0;
};

struct AlphaBetaFit {
  double alpha_s = 0.0;   // fixed cost per call
  double beta_Bps = 0.0;  // asymptotic bandwidth
  int points = 0;
  double time_s(double bytes) const { return alpha_s + bytes / beta_Bps; }
  // Least squares on relative error; needs two or more distinct sizes.
  static AlphaBetaFit fit(const std::vector<double>& bytes, const std::vector<double>& time_s);
};

}  // namespace scalecast::calibration
