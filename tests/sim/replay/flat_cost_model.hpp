#pragma once
// A cost model that prices every op at 1 ms, for engine tests about the exchange, not the
// kernels.

#include "calibration/cost_model.hpp"

namespace scalecast::sim::testing {

class FlatCostModel : public calibration::CostModel {
 public:
  calibration::OpCost op_time(const models::Op&, const platforms::GpuSpec&) const override {
    return {1e-3, calibration::CostTier::kFitted};
  }
};

}  // namespace scalecast::sim::testing
