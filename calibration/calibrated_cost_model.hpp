#pragma once
// The calibrated cost model: prices an op on a device from a calibration database through the
// four tiers of docs/architecture.md "Compute costs" — exact lookup, log-log interpolation within a
// shape family (at most one step beyond the measured range), a roofline with efficiency fitted to
// that device's measurements per (op class, pass, dtype), and the datasheet roofline with default
// efficiencies plus a per-kernel overhead. A per-scenario framework efficiency (a scalar, fitted
// elsewhere from anchors) divides every kernel's work time.

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "calibration/cost_model.hpp"
#include "calibration/database.hpp"
#include "calibration/efficiency_fit.hpp"

namespace scalecast::calibration {

struct CostModelOptions {
  std::string selection = "find";         // preferred rows: "find" (benchmark mode) or "heuristic"
  double framework_efficiency = 1.0;      // > 0: time_s = kernel time / framework_efficiency
  bool require_measured_device = false;   // unknown device: error instead of datasheet tier
  int min_fit_points = 12;                // fewer measurements in a group: no fitted curve
  CostTier best_tier = CostTier::kExact;  // skip tiers better than this (tests, ablations)
};

// A fitted group: one (device, op, pass, dtype, tensor-core) curve.
struct FitGroup {
  std::string device, op, pass;
  common::DType dtype = common::DType::kFp32;
  bool tensor_core = false;
  auto operator<=>(const FitGroup&) const = default;
};

class CalibratedCostModel : public CostModel {
 public:
  explicit CalibratedCostModel(const Database& db, CostModelOptions options = {});

  OpCost op_time(const models::Op& op, const platforms::GpuSpec& gpu) const override;
  // The same for a measurement key (selection ignored) with optional bytes moved.
  OpCost key_time(const MeasurementKey& key, const platforms::GpuSpec& gpu,
                  double bytes_moved = 0.0) const;

  void set_framework_efficiency(double efficiency);
  double framework_efficiency() const { return options_.framework_efficiency; }

  const std::map<FitGroup, RateFit>& fits() const { return fits_; }
  const std::map<MeasurementKey, AlphaBetaFit>& alpha_beta_fits() const { return alpha_beta_; }
  std::vector<std::string> devices() const;

  // The fixed cost of one kernel on a device (launch, ramp-up and drain; README "Kernel
  // overhead"): the device's fastest measured kernel, else the smallest such floor of any
  // measured device, else kFallbackKernelOverhead_s. Added to datasheet-tier kernels only: the
  // measured tiers already contain it.
  double kernel_overhead_s(const std::string& device) const;
  // DeepBench V100's fastest call (a 512x512x16 fp16 GEMM, 8 µs; data/deepbench-v100.yaml).
  static constexpr double kFallbackKernelOverhead_s = 8e-6;

  // The rate-fit base variables of a key: (ln FLOPs, ln intensity) for compute classes,
  // (ln bytes) for memory-bound ones.
  static std::vector<double> fit_variables(const MeasurementKey& key, double bytes);

 private:
  std::optional<double> exact(const MeasurementKey& key) const;
  // beyond_range (optional): set when the answer is the log-log step beyond a family's rows.
  std::optional<double> interpolate(const MeasurementKey& key, bool* beyond_range = nullptr) const;
  std::optional<double> fitted(const MeasurementKey& key, const platforms::GpuSpec& gpu,
                               double bytes) const;
  double datasheet(const MeasurementKey& key, const platforms::GpuSpec& gpu, double bytes) const;
  // The first tier that prices the key (exact, interpolated, fitted, datasheet), before the
  // kernel overhead and the framework efficiency. With beyond_range (a piece of a split op),
  // the datasheet tier is not consulted: no measured tier gives {infinity, kDatasheet}.
  OpCost work_time(const MeasurementKey& key, const platforms::GpuSpec& gpu, double bytes,
                   bool* beyond_range = nullptr) const;

  CostModelOptions options_;
  std::map<MeasurementKey, double> median_s_;  // selection-free keys, preferred row
  // family (key with the free dim zeroed, plus the dim's name) → sorted (value, median) points
  std::map<std::pair<MeasurementKey, std::string>, std::vector<std::pair<double, double>>>
      families_;
  std::map<FitGroup, RateFit> fits_;
  // copies, collectives, file reads: t(S) = α + S/β per key without its size (e.g. per ranks)
  std::map<MeasurementKey, AlphaBetaFit> alpha_beta_;
  std::map<std::string, double> kernel_overhead_s_;  // per measured device
  // A device with no rows: the smallest measured floor, or the fallback with no rows at all.
  double unmeasured_overhead_s_ = std::numeric_limits<double>::infinity();
};

}  // namespace scalecast::calibration
