#include "calibration/cost_model.hpp"

namespace scalecast::calibration {

std::string_view to_string(CostTier tier) {
  switch (tier) {
    case CostTier::kExact:
      return "exact";
    case CostTier::kInterpolated:
      return "interpolated";
    case CostTier::kFitted:
      return "fitted";
    case CostTier::kDatasheet:
      return "datasheet";
  }
  return "?";
}

}  // namespace scalecast::calibration
