#include "calibration/calibrated_cost_model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "calibration/default_efficiency.hpp"

namespace scalecast::calibration {
namespace {

// The dimensions along which an op splits into independent launches (README "Splitting bound").
std::vector<const char*> split_dims(std::string_view op) {
  if (op == "conv") return {"n"};
  if (op == "gemm") return {"m", "n"};
  return {};
}

bool fittable(const std::string& op) {
  return op != "memcpy" && op != "collective" && op != "file_read";
}

int selection_rank(const std::string& sel, const std::string& preferred) {
  if (sel == preferred) return 0;
  if (sel == "find") return 1;
  if (sel == "fixed") return 2;
  return 3;
}

double interp_loglog(double x, std::pair<double, double> a, std::pair<double, double> b) {
  const double lx = std::log(x), la = std::log(a.first), lb = std::log(b.first);
  const double slope = (std::log(b.second) - std::log(a.second)) / (lb - la);
  return std::exp(std::log(a.second) + slope * (lx - la));
}

}  // namespace

std::vector<double> CalibratedCostModel::fit_variables(const MeasurementKey& key, double bytes) {
  if (is_compute_op(key.op)) {
    const double flops = key_flops(key);
    if (key.op != "conv") {
      // GEMM efficiency follows intensity and the smallest dimension (tile utilisation); total
      // FLOPs add nothing once those are known and made the quadratic bend down at the edge of
      // the data (8192³ fell to 71% of peak against DeepBench's 84% median for large GEMMs).
      const double min_dim = static_cast<double>(
          std::max<std::int64_t>(std::min({key.dim("m"), key.dim("n"), key.dim("k")}), 1));
      return {std::log(flops / bytes), std::log(min_dim)};
    }
    std::vector<double> v{std::log(flops), std::log(flops / bytes)};
    {
      // Convs are heterogeneous (cuDNN switches between implicit GEMM, Winograd and FFT): the
      // filter footprint, channel counts and stride separate the regimes. Chosen by held-out
      // error on DeepBench V100 over four seeds (README "Fitted curves").
      const auto ln = [&](const char* d) {
        return std::log(static_cast<double>(std::max<std::int64_t>(key.dim(d), 1)));
      };
      v.push_back(std::log(static_cast<double>(key.dim("r") * key.dim("s"))));
      v.push_back(ln("c"));
      v.push_back(ln("k"));
      v.push_back(std::log(static_cast<double>(
          std::max<std::int64_t>(key.dim("stride_h") * key.dim("stride_w"), 1))));
    }
    return v;
  }
  return {std::log(bytes)};
}

CalibratedCostModel::CalibratedCostModel(const Database& db, CostModelOptions options)
    : options_(std::move(options)) {
  set_framework_efficiency(options_.framework_efficiency);
  std::map<MeasurementKey, std::pair<int, const Measurement*>> chosen;
  for (const Measurement* m : db.measurements()) {
    MeasurementKey k = m->key;
    k.selection.clear();
    const int rank = selection_rank(m->key.selection, options_.selection);
    auto it = chosen.find(k);
    if (it == chosen.end() || rank < it->second.first) chosen[k] = {rank, m};
  }
  std::map<FitGroup, std::vector<RateSample>> samples;
  for (const auto& [k, ranked] : chosen) {
    const Measurement* m = ranked.second;
    median_s_[k] = m->median_s;
    if (fittable(k.op) && m->median_s > 0) {
      const auto [it, fresh] = kernel_overhead_s_.try_emplace(k.device, m->median_s);
      if (!fresh) it->second = std::min(it->second, m->median_s);
    }
    for (const auto& d : free_dims(k.op)) {
      if (!k.dims.count(d)) continue;
      MeasurementKey fam = k;
      fam.dims.erase(d);
      families_[{fam, d}].emplace_back(static_cast<double>(k.dim(d)), m->median_s);
    }
    if (!fittable(k.op)) continue;
    const double bytes = m->bytes_moved > 0 ? m->bytes_moved : key_min_bytes(k);
    const double work = is_compute_op(k.op) ? key_flops(k) : bytes;
    if (!(work > 0) || !(bytes > 0)) continue;
    samples[{k.device, k.op, k.pass, k.dtype, k.tensor_core}].push_back(
        {fit_variables(k, bytes), work / m->median_s});
  }
  for (const auto& [device, t] : kernel_overhead_s_)
    unmeasured_overhead_s_ = std::min(unmeasured_overhead_s_, t);
  if (kernel_overhead_s_.empty()) unmeasured_overhead_s_ = kFallbackKernelOverhead_s;
  for (auto& [fam, pts] : families_) {
    std::sort(pts.begin(), pts.end());
    // Size sweeps of copies and collectives get a latency–bandwidth line ([NCCL-tests-PERF]).
    if (fam.second != "bytes" || pts.size() < 3) continue;
    std::vector<double> sizes, times;
    for (const auto& [x, t] : pts) sizes.push_back(x), times.push_back(t);
    try {
      alpha_beta_[fam.first] = AlphaBetaFit::fit(sizes, times);
    } catch (const std::invalid_argument&) {
      // degenerate sweep (one distinct size): no line
    }
  }
  for (const auto& [group, s] : samples) {
    if (static_cast<int>(s.size()) < options_.min_fit_points) continue;
    try {
      // Full quadratic in every variable; convs (28 coefficients) get a stronger ridge.
      fits_[group] = RateFit::fit(s, s.front().vars.size(), group.op == "conv" ? 1e-2 : 1e-3, 0.5);
    } catch (const std::invalid_argument&) {
      // Too few points for this group's variables: the group falls to the datasheet tier.
    }
  }
}

void CalibratedCostModel::set_framework_efficiency(double efficiency) {
  // Above 1 is legitimate: the kernel data or the datasheet tier's default efficiencies are
  // slower than what the framework achieves (validation fits it from anchors).
  if (!(efficiency > 0))
    throw std::invalid_argument(
        fmt::format("cost model: framework efficiency must be positive, got {}", efficiency));
  options_.framework_efficiency = efficiency;
}

std::vector<std::string> CalibratedCostModel::devices() const {
  std::set<std::string> d;
  for (const auto& [k, t] : median_s_) d.insert(k.device);
  return {d.begin(), d.end()};
}

double CalibratedCostModel::kernel_overhead_s(const std::string& device) const {
  const auto own = kernel_overhead_s_.find(device);
  return own != kernel_overhead_s_.end() ? own->second : unmeasured_overhead_s_;
}

std::optional<double> CalibratedCostModel::exact(const MeasurementKey& key) const {
  const auto it = median_s_.find(key);
  if (it == median_s_.end()) return std::nullopt;
  return it->second;
}

std::optional<double> CalibratedCostModel::interpolate(const MeasurementKey& key,
                                                       bool* beyond_range) const {
  if (beyond_range) *beyond_range = false;
  for (const auto& d : free_dims(key.op)) {
    if (!key.dims.count(d)) continue;
    MeasurementKey fam = key;
    fam.dims.erase(d);
    const auto it = families_.find({fam, d});
    if (it == families_.end() || it->second.size() < 2) continue;
    const auto& pts = it->second;
    const double x = static_cast<double>(key.dim(d));
    if (!(x > 0)) continue;
    const std::size_t n = pts.size();
    if (x >= pts.front().first && x <= pts.back().first) {
      const auto hi = std::lower_bound(pts.begin(), pts.end(), std::pair{x, 0.0});
      if (hi->first == x) return hi->second;
      return interp_loglog(x, *(hi - 1), *hi);
    }
    // At most one step beyond the measured range (docs/architecture.md, "Compute costs"), along the
    // end segment.
    if (x > pts.back().first && x <= pts.back().first * (pts[n - 1].first / pts[n - 2].first)) {
      if (beyond_range) *beyond_range = true;
      return interp_loglog(x, pts[n - 2], pts[n - 1]);
    }
    if (x < pts.front().first && x >= pts.front().first / (pts[1].first / pts[0].first)) {
      if (beyond_range) *beyond_range = true;
      return interp_loglog(x, pts[0], pts[1]);
    }
  }
  return std::nullopt;
}

std::optional<double> CalibratedCostModel::fitted(const MeasurementKey& key,
                                                  const platforms::GpuSpec& gpu,
                                                  double bytes) const {
  if (!fittable(key.op)) {
    MeasurementKey fam = key;
    fam.dims.erase("bytes");
    const auto ab = alpha_beta_.find(fam);
    if (ab == alpha_beta_.end()) return std::nullopt;
    const double t = ab->second.time_s(static_cast<double>(key.dim("bytes")));
    if (!std::isfinite(t) || !(t > 0)) return std::nullopt;  // next tier
    return t;
  }
  FitGroup g{key.device, key.op, key.pass, key.dtype, key.tensor_core};
  auto it = fits_.find(g);
  if (it == fits_.end() && key.op == "attention")  // per-head products priced as GEMMs
    it = fits_.find(FitGroup{key.device, "gemm", "any", key.dtype, key.tensor_core});
  if (it == fits_.end() || !(bytes > 0)) return std::nullopt;
  const auto vars = fit_variables(key, bytes);
  double rate = it->second.rate(vars);
  if (is_compute_op(key.op)) {
    const double flops = key_flops(key);
    if (!(flops > 0)) return std::nullopt;
    const double peak = gpu.peak_flops(key.dtype, key.tensor_core);
    // Direct-conv FLOPs let Winograd/FFT rows exceed peak ([DeepBench]), GEMMs cannot.
    if (peak > 0) rate = std::clamp(rate, 0.01 * peak, (key.op == "conv" ? 2.0 : 1.0) * peak);
    // The fit already carries the achieved efficiency (intensity is one of its variables), so
    // only the physical bound applies on top: no kernel moves its bytes faster than the peak.
    double t = flops / rate;
    if (gpu.memory_bandwidth > 0) t = std::max(t, bytes / gpu.memory_bandwidth);
    if (!std::isfinite(t) || !(t > 0)) return std::nullopt;  // a degenerate fit: next tier
    return t;
  }
  if (gpu.memory_bandwidth > 0) rate = std::min(rate, gpu.memory_bandwidth);
  const double t = bytes / rate;
  if (!std::isfinite(t) || !(t > 0)) return std::nullopt;
  return t;
}

double CalibratedCostModel::datasheet(const MeasurementKey& key, const platforms::GpuSpec& gpu,
                                      double bytes) const {
  if (key.op == "memcpy") {
    const double link =
        gpu.host_link == "memory" ? gpu.memory_bandwidth : host_link_bandwidth(gpu.host_link);
    if (!(link > 0))
      throw std::invalid_argument(fmt::format(
          "cost model: GPU '{}' has host link '{}' with no known bandwidth (known: pcie3x16, "
          "pcie4x16, pcie5x16, nvlink2)",
          gpu.name, gpu.host_link));
    return bytes / (link * default_link_efficiency());
  }
  if (key.op == "collective" || key.op == "file_read")
    throw std::invalid_argument(
        fmt::format("cost model: {} is priced by the network/storage model, not per GPU", key.op));
  double t = 0.0;
  if (is_compute_op(key.op)) {
    const double peak = gpu.peak_flops(key.dtype, key.tensor_core);
    if (!(peak > 0))
      throw std::invalid_argument(fmt::format(
          "cost model: GPU '{}' has no {}{} peak for {}", gpu.name, common::to_string(key.dtype),
          key.tensor_core ? " tensor-core" : "", key.signature()));
    t = key_flops(key) / (peak * default_compute_efficiency(key.op, key.pass, key.tensor_core));
  }
  if (!(gpu.memory_bandwidth > 0)) {
    if (is_compute_op(key.op)) return t;
    throw std::invalid_argument(fmt::format(
        "cost model: GPU '{}' has no memory bandwidth to price {}", gpu.name, key.signature()));
  }
  return std::max(t, bytes / (gpu.memory_bandwidth * default_memory_efficiency()));
}

OpCost CalibratedCostModel::work_time(const MeasurementKey& key, const platforms::GpuSpec& gpu,
                                      double bytes, bool* beyond_range) const {
  const auto allowed = [&](CostTier t) { return t >= options_.best_tier; };
  std::optional<double> t;
  if (beyond_range) *beyond_range = false;
  if (allowed(CostTier::kExact) && (t = exact(key))) return {*t, CostTier::kExact};
  if (allowed(CostTier::kInterpolated) && (t = interpolate(key, beyond_range)))
    return {*t, CostTier::kInterpolated};
  if (allowed(CostTier::kFitted) && (t = fitted(key, gpu, bytes))) return {*t, CostTier::kFitted};
  // A piece of a split op (beyond_range given) is priced by measurements only.
  if (beyond_range) return {std::numeric_limits<double>::infinity(), CostTier::kDatasheet};
  return {datasheet(key, gpu, bytes), CostTier::kDatasheet};
}

OpCost CalibratedCostModel::key_time(const MeasurementKey& key_in, const platforms::GpuSpec& gpu,
                                     double bytes_moved) const {
  if (gpu.name.empty())
    throw std::invalid_argument(
        "cost model: the GPU spec has no name (expected a catalog key such as \"v100-sxm2\")");
  MeasurementKey key = key_in;
  key.device = gpu.calibration_device();
  key.selection.clear();
  if (options_.require_measured_device) {
    const auto devs = devices();
    if (!std::binary_search(devs.begin(), devs.end(), key.device))
      throw std::invalid_argument(fmt::format(
          "cost model: no measurements for device '{}' in the calibration database (measured: {})",
          key.device,
          devs.empty() ? std::string("none") : fmt::format("{}", fmt::join(devs, ", "))));
  }
  const double bytes = bytes_moved > 0 ? bytes_moved : key_min_bytes(key);
  OpCost cost = work_time(key, gpu, bytes);
  // An op over independent rows (a convolution's images, a GEMM's output rows or columns) can
  // run as k launches over ceil(d / k) of them each, so a larger op never takes longer than its
  // pieces: t(d) <= k t(ceil(d / k)). Measured rows carry this by construction, but a fit
  // extrapolated beyond its data need not (README "Splitting bound"). The datasheet tier,
  // overhead plus work over a fixed rate, satisfies it already, so only measured tiers are
  // bounded, and only by pieces priced at least as directly as the whole (an exact time only by
  // exact pieces, so a fit's error cannot undercut a measurement) and without the log-log step
  // beyond a family's rows (a super-linear end segment run below the data would make small
  // pieces cheaper than anything measured).
  if (cost.tier != CostTier::kDatasheet) {
    const CostTier whole_tier = cost.tier;
    const double min_bytes = key_min_bytes(key);
    for (const char* dim : split_dims(key.op)) {
      const std::int64_t d = key.dim(dim);
      for (std::int64_t k = 2; d > 1; k *= 2) {
        MeasurementKey piece = key;
        const std::int64_t part = (d + k - 1) / k;
        piece.dims[dim] = part;
        bool beyond = false;
        const OpCost p = work_time(piece, gpu, bytes * key_min_bytes(piece) / min_bytes, &beyond);
        if (p.tier <= whole_tier && !beyond && static_cast<double>(k) * p.time_s < cost.time_s)
          cost = {static_cast<double>(k) * p.time_s, p.tier};
        if (part == 1) break;
      }
    }
  }

  // A kernel costs its launch, ramp-up and drain besides its work, and no framework efficiency
  // scales that (README "Kernel overhead", "Fixed per-iteration costs"). The datasheet roofline
  // prices work only, so the overhead is added; a measured time contains it, so only the part
  // above it is divided (else an anchor's fitted efficiency would scale a cost that does not
  // shrink with the batch).
  if (fittable(key.op)) {
    const double overhead = kernel_overhead_s(key.device);
    if (cost.tier == CostTier::kDatasheet) {
      cost.time_s = cost.time_s / options_.framework_efficiency + overhead;
    } else {
      const double floor = std::min(cost.time_s, overhead);
      cost.time_s = floor + (cost.time_s - floor) / options_.framework_efficiency;
    }
  } else {
    cost.time_s /= options_.framework_efficiency;
  }
  return cost;
}

OpCost CalibratedCostModel::op_time(const models::Op& op, const platforms::GpuSpec& gpu) const {
  if (gpu.name.empty())
    throw std::invalid_argument(
        "cost model: the GPU spec has no name (expected a catalog key such as \"v100-sxm2\")");
  return key_time(key_for(op, gpu.calibration_device()), gpu, op.bytes_read + op.bytes_written);
}

}  // namespace scalecast::calibration
