#include "validation/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace scalecast::validation {

ErrorSummary summarize(const std::vector<double>& errors_pct) {
  ErrorSummary s;
  std::vector<double> abs;
  abs.reserve(errors_pct.size());
  for (double e : errors_pct) abs.push_back(std::abs(e));
  s.count = static_cast<int>(abs.size());
  if (abs.empty()) return s;
  std::sort(abs.begin(), abs.end());
  double sum = 0.0;
  for (double a : abs) sum += a;
  s.mape_pct = sum / static_cast<double>(abs.size());
  const std::size_t n = abs.size();
  s.median_abs_pct = n % 2 == 1 ? abs[n / 2] : 0.5 * (abs[n / 2 - 1] + abs[n / 2]);
  s.max_abs_pct = abs.back();
  return s;
}

RunSummary summarize(const ValidationRun& run) {
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_system;
  std::map<std::string, int> skipped_by_system;
  int skipped = 0;
  for (const PointResult& r : run.points) {
    const std::string& system = r.point->system;
    by_system[system];  // a system whose points were all skipped still gets a row
    if (r.simulated) {
      all.push_back(r.error_pct);
      by_system[system].push_back(r.error_pct);
    } else {
      ++skipped;
      ++skipped_by_system[system];
    }
  }
  RunSummary out;
  out.overall = summarize(all);
  out.overall.skipped = skipped;
  for (const auto& [system, errors] : by_system) {
    ErrorSummary s = summarize(errors);
    s.skipped = skipped_by_system[system];
    out.per_system[system] = s;
  }
  return out;
}

}  // namespace scalecast::validation
