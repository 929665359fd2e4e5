#include "validation/report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/config_error.hpp"

namespace scalecast::validation {
namespace {

using Json = nlohmann::ordered_json;

bool is_efficiency(const ValidationPoint& p) {
  return p.measured.kind == MeasuredKind::kScalingEfficiency;
}

std::string value_text(const ValidationPoint& p, double v) {
  switch (p.measured.kind) {
    case MeasuredKind::kScalingEfficiency:
      return fmt::format("{:.3f} eff", v);
    case MeasuredKind::kMfu:
      return fmt::format("{:.1f}% MFU", 100.0 * v);
    case MeasuredKind::kHfu:
      return fmt::format("{:.1f}% HFU", 100.0 * v);
    case MeasuredKind::kIterationSeconds:
      return fmt::format("{:.2f} s/it", v);
    case MeasuredKind::kTokensPerSecondPerGpu:
      return fmt::format("{:.0f} tok/s/g", v);
    case MeasuredKind::kTflopsPerGpu:
      return fmt::format("{:.1f} TF/s/g", v);
    default:
      return fmt::format("{:.1f}", v);
  }
}

// Rounded so the JSON is stable across platforms' last-bit differences.
double round_to(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

Json summary_json(const ErrorSummary& s) {
  Json j;
  j["mape_pct"] = round_to(s.mape_pct, 3);
  j["median_abs_pct"] = round_to(s.median_abs_pct, 3);
  j["max_abs_pct"] = round_to(s.max_abs_pct, 3);
  j["count"] = s.count;
  j["skipped"] = s.skipped;
  return j;
}

std::string summary_row(const std::string& name, const ErrorSummary& s) {
  if (s.count == 0)
    return fmt::format("{:<22} {:>5} {:>8} {:>8} {:>8} {:>7}\n", name, 0, "-", "-", "-", s.skipped);
  return fmt::format("{:<22} {:>5} {:>8.2f} {:>8.2f} {:>8.2f} {:>7}\n", name, s.count, s.mape_pct,
                     s.median_abs_pct, s.max_abs_pct, s.skipped);
}

}  // namespace

std::string format_table(const ValidationFile& file, const ValidationRun& run,
                         const RunSummary& summary) {
  std::string out = fmt::format("Validation of {}: {} predict points, {} anchors\n\n", file.path,
                                run.points.size(), run.anchors.size());
  out += fmt::format("{:<20} {:<20} {:<14} {:>5} {:>14} {:>14} {:>9}\n", "id", "system", "model",
                     "GPUs", "measured", "predicted", "error %");
  bool unknown_precision = false;
  for (const PointResult& r : run.points) {
    const ValidationPoint& p = *r.point;
    unknown_precision = unknown_precision || p.precision == "unknown";
    if (!r.simulated) continue;
    out +=
        fmt::format("{:<20} {:<20} {:<14} {:>5} {:>14} {:>14} {:>+9.2f}\n", p.id, p.system, p.model,
                    p.gpus, value_text(p, r.measured), value_text(p, r.predicted), r.error_pct);
  }
  int skipped = 0;
  for (const PointResult& r : run.points) {
    if (r.simulated) continue;
    if (skipped++ == 0) out += "\nSkipped (not simulated):\n";
    out += fmt::format("  {:<20} {:<20} {}{}\n", r.point->id, r.point->system,
                       r.failed ? "FAILED " : "", r.skip_reason);
  }
  out += "\nAnchors (fitted framework efficiency, residual after the fit):\n";
  for (const AnchorFit& a : run.anchors) {
    if (!a.fitted) {
      out += fmt::format("  {:<20} {}not fitted: {}\n", a.id, a.failed ? "FAILED " : "",
                         a.skip_reason);
      continue;
    }
    out += fmt::format("  {:<20} efficiency {:.4f}  residual {:+.4f}%  ({} simulations)\n", a.id,
                       a.efficiency, a.residual_pct, a.simulations);
  }
  if (unknown_precision) {
    out += "\nPoints with precision \"unknown\" are simulated as fp32 (README 5.6).\n";
  }
  out += fmt::format("\n{:<22} {:>5} {:>8} {:>8} {:>8} {:>7}\n", "system", "count", "MAPE %",
                     "median %", "max %", "skipped");
  for (const auto& [system, s] : summary.per_system) out += summary_row(system, s);
  out += summary_row("overall", summary.overall);
  return out;
}

std::string format_json(const ValidationFile& file, const ValidationRun& run,
                        const RunSummary& summary) {
  Json root;
  root["file"] = file.path;
  Json points = Json::array();
  Json skipped = Json::array();
  for (const PointResult& r : run.points) {
    const ValidationPoint& p = *r.point;
    if (!r.simulated) {
      skipped.push_back({{"id", p.id},
                         {"system", p.system},
                         {"model", p.model},
                         {"reason", r.skip_reason},
                         {"failed", r.failed}});
      continue;
    }
    Json j;
    j["id"] = p.id;
    j["system"] = p.system;
    j["model"] = p.model;
    j["precision"] = p.precision;
    j["framework"] = p.framework;
    j["strategy"] = std::string(to_string(p.strategy));
    j["batch_per_gpu"] = p.batch_per_gpu;
    if (p.accumulation > 1) j["accumulation"] = p.accumulation;  // micro-batches per exchange
    j["gpus"] = p.gpus;
    j["nodes"] = p.nodes;
    j["anchor"] = p.anchor;
    j["kind"] = is_efficiency(p) ? "scaling_efficiency" : "throughput";
    j["measured"] = p.measured.value;
    j["predicted"] = round_to(r.predicted, is_efficiency(p) ? 6 : 3);
    j["error_pct"] = round_to(r.error_pct, 3);
    j["iteration_time_s"] = round_to(r.prediction.iteration_time_s, 9);
    const Breakdown& b = r.prediction.breakdown;
    j["breakdown"] = {{"compute_s", round_to(b.compute_s, 9)},
                      {"exposed_comm_s", round_to(b.exposed_comm_s, 9)},
                      {"io_stall_s", round_to(b.io_stall_s, 9)},
                      {"copy_s", round_to(b.copy_s, 9)},
                      {"idle_s", round_to(b.idle_s, 9)}};
    // How much of the prediction's op time rests on measured kernels (absent where the run
    // does not say).
    if (r.prediction.measured_kernel_share >= 0.0)
      j["measured_kernel_share"] = round_to(r.prediction.measured_kernel_share, 4);
    points.push_back(j);
  }
  root["points"] = points;
  root["skipped"] = skipped;
  Json anchors = Json::array();
  for (const AnchorFit& a : run.anchors) {
    const ValidationPoint* p = file.find(a.id);
    Json j;
    j["id"] = a.id;
    j["system"] = p->system;
    j["model"] = p->model;
    j["precision"] = p->precision;
    j["framework"] = p->framework;
    j["batch_per_gpu"] = p->batch_per_gpu;
    if (p->accumulation > 1) j["accumulation"] = p->accumulation;
    j["gpus"] = p->gpus;
    j["nodes"] = p->nodes;
    j["fitted"] = a.fitted;
    if (a.fitted) {
      j["efficiency"] = round_to(a.efficiency, 6);
      j["measured"] = a.measured;
      j["simulated"] = round_to(a.simulated, 3);
      j["residual_pct"] = round_to(a.residual_pct, 4);
      j["simulations"] = a.simulations;
    } else {
      j["reason"] = a.skip_reason;
      j["failed"] = a.failed;
    }
    anchors.push_back(j);
  }
  root["anchors"] = anchors;
  root["summary"] = summary_json(summary.overall);
  Json per_system = Json::object();
  for (const auto& [system, s] : summary.per_system) per_system[system] = summary_json(s);
  root["per_system"] = per_system;
  return root.dump(2) + "\n";
}

void write_report_file(const std::string& option, const std::string& path,
                       const std::string& text) {
  // A device or pipe is written in place by write_file_atomic (a file renamed over /dev/full
  // replaced the device and reported success); its errors name the option here.
  try {
    common::write_file_atomic(path, text);
  } catch (const common::ConfigError& e) {
    throw common::ConfigError(option, 0, 0, "", fmt::format("{}: {}", path, e.message()));
  }
}

}  // namespace scalecast::validation
