#pragma once
// The cost model: how long one op takes on one GPU. It is an interface so a calibrated, fitted
// or purely analytical model plugs into the replay engine without touching sim/. Every answer
// says which tier produced it (exact measurement, interpolation in a shape family, fitted
// roofline, datasheet roofline), and ops.csv shows it.

#include <string>
#include <string_view>

#include "models/op.hpp"
#include "platforms/gpu_spec.hpp"

namespace scalecast::calibration {

enum class CostTier { kExact, kInterpolated, kFitted, kDatasheet };

std::string_view to_string(CostTier tier);

struct OpCost {
  double time_s = 0.0;
  CostTier tier = CostTier::kDatasheet;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Time of `op` on a GPU of type `gpu`. Throws std::invalid_argument for an op the model cannot
  // price at all (e.g. fp8 on a GPU without fp8).
  virtual OpCost op_time(const models::Op& op, const platforms::GpuSpec& gpu) const = 0;
};

}  // namespace scalecast::calibration
