#pragma once
// Error statistics of a validation run (README section 5.4): over the simulated predict points,
// per system and overall, the count, MAPE (mean |e|), median |e| and max |e|, all in percent.
// Anchors never enter them; skipped points are counted separately.

#include <map>
#include <string>
#include <vector>

#include "validation/protocol.hpp"

namespace scalecast::validation {

struct ErrorSummary {
  int count = 0;
  double mape_pct = 0.0;
  double median_abs_pct = 0.0;
  double max_abs_pct = 0.0;
  int skipped = 0;
};

// Summary of signed errors in percent (empty input: count 0 and zeros).
ErrorSummary summarize(const std::vector<double>& errors_pct);

struct RunSummary {
  ErrorSummary overall;
  std::map<std::string, ErrorSummary> per_system;  // sorted by system name
};

RunSummary summarize(const ValidationRun& run);

}  // namespace scalecast::validation
