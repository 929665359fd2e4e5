#include "calibration/coverage.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "calibration/calibrated_cost_model.hpp"
#include "calibration/collective_model.hpp"

namespace scalecast::calibration {
namespace {

std::string precision_label(common::DType d, bool tc) {
  return std::string(common::to_string(d)) + (tc ? "+tc" : "");
}

// Reference keys at which a fitted curve is evaluated for the summary.
std::vector<std::pair<std::string, MeasurementKey>> probes(const FitGroup& g) {
  std::vector<std::pair<std::string, MeasurementKey>> out;
  const auto key = [&](std::map<std::string, std::int64_t> dims) {
    return MeasurementKey{g.device, g.op, g.pass, g.dtype, g.tensor_core, "", std::move(dims)};
  };
  if (g.op == "gemm" || g.op == "attention") {
    for (std::int64_t n : {512, 2048, 8192})
      out.emplace_back(fmt::format("{0}x{0}x{0}", n),
                       key({{"m", n}, {"n", n}, {"k", n}, {"trans_a", 0}, {"trans_b", 0}}));
    out.emplace_back("1760x16x1760",
                     key({{"m", 1760}, {"n", 16}, {"k", 1760}, {"trans_a", 0}, {"trans_b", 0}}));
  } else if (g.op == "conv") {
    const auto conv = [&](std::int64_t c, std::int64_t hw, std::int64_t k, std::int64_t rs) {
      return key({{"n", 16},
                  {"c", c},
                  {"h", hw},
                  {"w", hw},
                  {"k", k},
                  {"r", rs},
                  {"s", rs},
                  {"pad_h", rs / 2},
                  {"pad_w", rs / 2},
                  {"stride_h", 1},
                  {"stride_w", 1}});
    };
    out.emplace_back("N16 3x3 64->64 @56", conv(64, 56, 64, 3));
    out.emplace_back("N16 1x1 256->1024 @14", conv(256, 14, 1024, 1));
    out.emplace_back("N16 3x3 512->512 @7", conv(512, 7, 512, 3));
  } else {
    for (std::int64_t e : {1 << 16, 1 << 20, 1 << 24})
      out.emplace_back(fmt::format("{} elements", e), key({{"elements", e}}));
  }
  return out;
}

}  // namespace

std::string describe_database(const Database& db) {
  std::string out =
      fmt::format("calibration database: {} measurements, {} sources, format version {}\n",
                  db.size(), db.sources().size(), kDatabaseVersion);
  out += "\nsources:\n";
  for (const auto& [id, s] : db.sources()) {
    std::string libs;
    for (const auto& [lib, v] : s.libraries) libs += fmt::format(" {} {}", lib, v);
    out +=
        fmt::format("  {}: device {} ({}), backend {}, date {}{}{}\n", id, s.device,
                    s.device_name.empty() ? "?" : s.device_name, s.backend, s.date,
                    s.driver.empty() ? "" : ", driver " + s.driver, libs.empty() ? "" : "," + libs);
  }
  using Row = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Row, std::pair<int, std::set<std::string>>> cov;
  for (const Measurement* m : db.measurements()) {
    auto& c = cov[{m->key.device, precision_label(m->key.dtype, m->key.tensor_core), m->key.op,
                   m->key.pass}];
    ++c.first;
    c.second.insert(m->key.selection);
  }
  out += "\ncoverage (device, precision, op, pass: measurements [selections]):\n";
  for (const auto& [row, c] : cov) {
    std::string sel;
    for (const auto& s : c.second) sel += (sel.empty() ? "" : ",") + s;
    out += fmt::format("  {:<12} {:<9} {:<14} {:<12} {:>5}  [{}]\n", std::get<0>(row),
                       std::get<1>(row), std::get<2>(row), std::get<3>(row), c.first, sel);
  }
  const CalibratedCostModel model(db);
  out += "\nfitted curves (rate = f(size); ln-space quadratic + local residual correction):\n";
  if (model.fits().empty()) out += "  none (a group needs 12 or more measurements)\n";
  for (const auto& [g, fit] : model.fits()) {
    out += fmt::format("  {} {} {} {}: {} points, rms log error {:.3f}\n", g.device, g.op, g.pass,
                       precision_label(g.dtype, g.tensor_core), fit.points(), fit.rms_log_error());
    for (const auto& [label, key] : probes(g)) {
      const double bytes = key_min_bytes(key);
      const double rate = fit.rate(CalibratedCostModel::fit_variables(key, bytes));
      out += is_compute_op(g.op) ? fmt::format("      {:<24} {:8.2f} TFLOP/s\n", label, rate / 1e12)
                                 : fmt::format("      {:<24} {:8.1f} GB/s\n", label, rate / 1e9);
    }
  }
  if (!model.alpha_beta_fits().empty()) out += "\nlatency-bandwidth lines t(S) = alpha + S/beta:\n";
  for (const auto& [key, ab] : model.alpha_beta_fits())
    out += fmt::format("  {}: alpha {:.2f} us, beta {:.2f} GB/s ({} sizes)\n", key.signature(),
                       ab.alpha_s * 1e6, ab.beta_Bps / 1e9, ab.points);
  // What NCCL's collective model takes from the database (collective_model.hpp): all-reduce
  // lines per (algorithm, link class, ranks) that replace the datasheet terms (tier measured).
  std::string coll;
  for (const std::string& device : db.devices())
    for (const auto& [k, ab] : fit_measured_all_reduces(db, device))
      coll += fmt::format("  {} {} {} ranks {}: alpha {:.2f} us, beta {:.2f} GB/s ({} sizes)\n",
                          device, k.algorithm.empty() ? "nccl-choice" : k.algorithm, k.link_class,
                          k.ranks, ab.alpha_s * 1e6, ab.beta_Bps / 1e9, ab.points);
  if (!coll.empty()) out += "\nmeasured all-reduces for NCCL's model (tier measured):\n" + coll;
  return out;
}

}  // namespace scalecast::calibration
