#pragma once
// The anchor/predict protocol (validation/README.md section 5): for every predict point P with
// anchor A, fit the framework efficiency so that the simulated throughput of A's configuration
// equals A's measured throughput, then simulate P with that efficiency and nothing else from
// the file. Only anchor measurements are ever read as inputs; predict measurements are only
// compared against, after the prediction is made.

#include <string>
#include <vector>

#include "validation/predictor.hpp"
#include "validation/validation_file.hpp"

namespace scalecast::validation {

// The framework efficiencies a fit may try: the range the scenario accepts for
// `framework_efficiency` (sim/scenario.cpp). A fit that needs one outside it cannot reach the
// anchor's measurement, and the anchor is not fitted, with that reason at its measured value.
inline constexpr double kMinFitEfficiency = 1e-3;
inline constexpr double kMaxFitEfficiency = 100.0;

struct ProtocolOptions {
  double fit_tolerance = 1e-4;  // relative anchor residual at which the fit stops
  int fit_max_simulations = 12;
  // Relative anchor residual beyond which the anchor counts as not fitted once the simulations
  // are spent: costs that the efficiency does not divide (fixed per-step host time, exposed
  // communication) can make the measured throughput unreachable at any efficiency, and such a
  // fit must not be used for predictions.
  double fit_accept = 0.01;
  bool fit_unused_anchors = true;  // also fit anchors no predict point names (residual report)
  int jobs = 1;  // simulations run concurrently (> 1 requires a thread-safe Predictor)
};

// The fitted efficiency of one anchor and how well the simulated anchor matches its measurement.
struct AnchorFit {
  std::string id;
  bool fitted = false;
  double efficiency = 0.0;
  double measured = 0.0;
  double simulated = 0.0;
  double residual_pct = 0.0;
  int simulations = 0;
  std::string skip_reason;  // when not fitted
  // Not fitted because a simulation failed unexpectedly (not Unsupported: e.g. a child that
  // crashed or exited 4); skip_reason then carries the child's output tail.
  bool failed = false;
};

struct PointResult {
  const ValidationPoint* point = nullptr;
  bool simulated = false;
  double measured = 0.0;   // throughput (samples/s) or efficiency fraction
  double predicted = 0.0;  // same unit as measured
  double error_pct = 0.0;  // signed, (predicted - measured) / measured * 100
  Prediction prediction;   // the simulated configuration of the point
  std::string skip_reason;
  // Not simulated because a simulation (its own, its baseline's or its anchor's) failed
  // unexpectedly; the run goes on and the point is listed with the reason. Callers that gate
  // on the run (validate's exit status, the public-set test) treat it as a failure.
  bool failed = false;
};

struct ValidationRun {
  std::vector<PointResult> points;  // predict points, in file order
  std::vector<AnchorFit> anchors;   // anchors in file order

  // Points and anchors whose simulation failed unexpectedly (PointResult::failed).
  int failures() const;
};

// Fits the framework efficiency of `anchor`: efficiency e such that the simulated throughput
// equals the measured one. Iterates e <- e * measured / simulated, which is exact in one step
// for compute-bound configurations and converges for ones with communication.
AnchorFit fit_anchor(const ValidationPoint& anchor, const std::string& base_dir,
                     const Predictor& predictor, const ProtocolOptions& options);

ValidationRun run_protocol(const ValidationFile& file, const Predictor& predictor,
                           const ProtocolOptions& options = {});

// A prediction in `point`'s metric (samples/s, or for LLM points tokens/s/GPU, seconds per
// iteration, MFU, HFU, or TFLOP/s per GPU as Narayanan et al. count it: 96 B s l h^2 (1 + s/6h
// + V/16lh) per iteration). Throws Unsupported when the metric cannot be computed.
double metric_of(const ValidationPoint& point, const Prediction& prediction);

// Folder that relative platform paths in `file_path` resolve against.
std::string base_dir_of(const std::string& file_path);

}  // namespace scalecast::validation
