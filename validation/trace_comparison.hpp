#pragma once
// Measured versus simulated trace, per category (iteration, compute, communication, exposed
// communication, copies, idle) and per op class, each with its signed error. The simulated side
// comes through the ScenarioSimulator seam: the real one runs `scalecast run` and reads its
// Chrome-format trace.json with the same reader as measured Chrome traces.

#include <string>
#include <vector>

#include "validation/trace_metrics.hpp"

namespace scalecast::validation {

struct CategoryRow {
  std::string name;
  double measured_s = 0.0;
  double simulated_s = 0.0;
  bool has_error = false;  // false when the measured value is zero (no relative error)
  double error_pct = 0.0;
};

struct TraceComparison {
  std::vector<CategoryRow> categories;
  std::vector<CategoryRow> op_classes;  // union of both sides' classes, sorted
};

TraceComparison compare_metrics(const TraceMetrics& measured, const TraceMetrics& simulated);

std::string format_comparison(const TraceComparison& comparison, const TraceMetrics& measured,
                              const TraceMetrics& simulated);
std::string comparison_json(const TraceComparison& comparison);

// Produces the simulated trace of a scenario.
class ScenarioSimulator {
 public:
  virtual ~ScenarioSimulator() = default;
  virtual Trace simulate(const std::string& scenario_path) const = 0;
};

}  // namespace scalecast::validation
