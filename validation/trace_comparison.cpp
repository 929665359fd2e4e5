#include "validation/trace_comparison.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

namespace scalecast::validation {
namespace {

CategoryRow row(const std::string& name, double measured_s, double simulated_s) {
  CategoryRow r{name, measured_s, simulated_s, false, 0.0};
  if (measured_s > 0.0) {
    r.has_error = true;
    r.error_pct = (simulated_s - measured_s) / measured_s * 100.0;
  }
  return r;
}

std::string row_text(const CategoryRow& r) {
  const std::string err = r.has_error ? fmt::format("{:+9.2f}", r.error_pct) : "        -";
  return fmt::format("{:<22} {:>14.6f} {:>14.6f} {}\n", r.name, r.measured_s * 1e3,
                     r.simulated_s * 1e3, err);
}

}  // namespace

TraceComparison compare_metrics(const TraceMetrics& measured, const TraceMetrics& simulated) {
  const IterationMetrics& m = measured.median;
  const IterationMetrics& s = simulated.median;
  TraceComparison c;
  c.categories = {row("iteration", m.iteration_s, s.iteration_s),
                  row("compute", m.compute_s, s.compute_s),
                  row("communication", m.comm_s, s.comm_s),
                  row("exposed communication", m.exposed_comm_s, s.exposed_comm_s),
                  row("copies", m.copy_s, s.copy_s),
                  row("idle", m.idle_s, s.idle_s)};
  std::set<std::string> classes;
  for (const auto& [cls, t] : m.op_class_s) classes.insert(cls);
  for (const auto& [cls, t] : s.op_class_s) classes.insert(cls);
  for (const std::string& cls : classes) {
    const auto mi = m.op_class_s.find(cls);
    const auto si = s.op_class_s.find(cls);
    c.op_classes.push_back(row(cls, mi == m.op_class_s.end() ? 0.0 : mi->second,
                               si == s.op_class_s.end() ? 0.0 : si->second));
  }
  return c;
}

std::string format_comparison(const TraceComparison& comparison, const TraceMetrics& measured,
                              const TraceMetrics& simulated) {
  std::string out = fmt::format(
      "measured: device {}, {} iterations ({} steady); simulated: device {}, {} iterations ({} "
      "steady); medians per iteration\n\n",
      measured.device, measured.iteration_count, measured.steady_count, simulated.device,
      simulated.iteration_count, simulated.steady_count);
  out += fmt::format("{:<22} {:>14} {:>14} {:>9}\n", "category", "measured ms", "simulated ms",
                     "error %");
  for (const CategoryRow& r : comparison.categories) out += row_text(r);
  out += fmt::format("\n{:<22} {:>14} {:>14} {:>9}\n", "op class (sum)", "measured ms",
                     "simulated ms", "error %");
  for (const CategoryRow& r : comparison.op_classes) out += row_text(r);
  return out;
}

std::string comparison_json(const TraceComparison& comparison) {
  using Json = nlohmann::ordered_json;
  auto rows = [](const std::vector<CategoryRow>& v) {
    Json a = Json::array();
    for (const CategoryRow& r : v) {
      Json j{{"name", r.name}, {"measured_s", r.measured_s}, {"simulated_s", r.simulated_s}};
      j["error_pct"] = r.has_error ? Json(std::round(r.error_pct * 1000.0) / 1000.0) : Json();
      a.push_back(j);
    }
    return a;
  };
  Json root;
  root["categories"] = rows(comparison.categories);
  root["op_classes"] = rows(comparison.op_classes);
  return root.dump(2) + "\n";
}

}  // namespace scalecast::validation
