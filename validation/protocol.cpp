#include "validation/protocol.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "common/interrupt.hpp"
#include "models/transformer.hpp"

namespace scalecast::validation {

Configuration configuration_of(const ValidationPoint& point, const std::string& base_dir) {
  Configuration c;
  c.system = point.system;
  c.base_dir = base_dir;
  c.model = point.model;
  // A sample computes tokens_per_sample tokens where the recipe does not pad (FORMAT.md section
  // 2): the scenario's sequence is that long.
  c.seq_len = point.tokens_per_sample ? point.tokens_per_sample : point.seq_len;
  c.fused_attention = point.fused_attention;
  // README 5.6: "unknown" precision appears only where the anchor shares it, so compute speed
  // comes from the anchor's fit; everything else precision-dependent is simulated as fp32.
  c.precision = point.precision == "unknown" ? "fp32" : point.precision;
  c.precision_stated = point.precision != "unknown";
  c.framework = point.framework;
  c.strategy = point.strategy;
  c.comm = point.comm;
  c.batch_per_gpu = point.batch_per_gpu;
  c.accumulation = point.accumulation;
  c.allreduce = point.allreduce;
  c.gpus = point.gpus;
  c.nodes = point.nodes;
  if (point.is_parallel() && point.parallel_node) {
    // The scenario's `parallel:` (scenarios/README.md "LLM training"): the point's map with its
    // sequence length and precision, on one line.
    YAML::Node map = YAML::Clone(point.parallel_node->raw());
    if (point.seq_len) map["seq_len"] = *point.seq_len;
    map["precision"] = point.precision == "amp_fp16" ? "fp16" : point.precision;
    YAML::Emitter out;
    out.SetMapFormat(YAML::Flow);
    out.SetSeqFormat(YAML::Flow);
    out << map;
    c.parallel = out.c_str();
  }
  return c;
}

static double narayanan_tflops_per_gpu(const ValidationPoint& p, double iteration_time_s) {
  const auto model = models::find_transformer(p.model);
  if (!model || !p.parallel || !p.seq_len || !(iteration_time_s > 0.0))
    throw Unsupported("tflops_per_gpu needs a transformer of the LLM zoo and its parallel map");
  // Narayanan et al. SC'21 Eq. 3: F = 96 B s l h^2 (1 + s / 6h + V / 16 l h) per iteration,
  // activation recomputation included.
  const double b = static_cast<double>(p.parallel->global_batch), s = *p.seq_len,
               l = static_cast<double>(model->layers), h = static_cast<double>(model->hidden),
               v = static_cast<double>(model->vocab);
  const double flops = 96.0 * b * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
  return flops / (iteration_time_s * p.gpus) / 1e12;
}

double metric_of(const ValidationPoint& p, const Prediction& pr) {
  switch (p.measured.kind) {
    case MeasuredKind::kThroughput:
    case MeasuredKind::kScalingEfficiency:
      return pr.throughput_samples_per_s;
    case MeasuredKind::kTokensPerSecondPerGpu:
      return pr.tokens_per_s_per_gpu;
    case MeasuredKind::kIterationSeconds:
      return pr.iteration_time_s;
    case MeasuredKind::kMfu:
    case MeasuredKind::kHfu: {
      // The simulator's MFU counts FLOPs as models::FlopConvention::kModel; a source that
      // counts otherwise (FORMAT.md section 9, `flops`) is compared in its own convention: the
      // same tokens/s per GPU times its FLOPs per token, over the same peak. HFU keeps the
      // simulated recomputation on top.
      const double simulated = p.measured.kind == MeasuredKind::kMfu ? pr.mfu : pr.hfu;
      if (p.measured.flops == models::FlopConvention::kModel) return simulated;
      const auto model = models::find_transformer(p.model);
      if (!model || !p.seq_len || !(pr.peak_flops_per_gpu > 0.0))
        throw Unsupported("mfu in another FLOP convention needs a transformer of the LLM zoo");
      const double mfu = models::model_flops_per_token(*model, *p.seq_len, p.measured.flops) *
                         pr.tokens_per_s_per_gpu / pr.peak_flops_per_gpu;
      return p.measured.kind == MeasuredKind::kMfu ? mfu : mfu + (pr.hfu - pr.mfu);
    }
    case MeasuredKind::kTflopsPerGpu:
      return narayanan_tflops_per_gpu(p, pr.iteration_time_s);
  }
  return pr.throughput_samples_per_s;
}

static double speed_of(MeasuredKind kind, double value) {
  return kind == MeasuredKind::kIterationSeconds ? 1.0 / value : value;
}

std::string base_dir_of(const std::string& file_path) {
  const std::filesystem::path parent = std::filesystem::path(file_path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

AnchorFit fit_anchor(const ValidationPoint& anchor, const std::string& base_dir,
                     const Predictor& predictor, const ProtocolOptions& options) {
  AnchorFit fit;
  fit.id = anchor.id;
  fit.measured = anchor.measured.value;
  if (!anchor.unsimulatable.empty()) {  // mark_unsimulatable(), at its own key
    fit.skip_reason = anchor.unsimulatable;
    return fit;
  }
  Configuration config = configuration_of(anchor, base_dir);
  double efficiency = 1.0;
  try {
    for (int i = 0; i < options.fit_max_simulations; ++i) {
      config.framework_efficiency = efficiency;
      // In the anchor's own metric (samples/s, or an LLM metric: tokens/s/GPU, MFU, ...).
      const double simulated = metric_of(anchor, predictor.predict(config));
      ++fit.simulations;
      if (!(simulated > 0.0)) {
        throw Unsupported(
            fmt::format("simulated throughput {} at efficiency {}", simulated, efficiency));
      }
      fit.efficiency = efficiency;
      fit.simulated = simulated;
      fit.residual_pct = (simulated - fit.measured) / fit.measured * 100.0;
      if (std::abs(fit.residual_pct) <= options.fit_tolerance * 100.0) break;
      // Fixed-point step: throughput is proportional to efficiency where compute dominates
      // (for a time per iteration, its inverse is).
      const double next = efficiency * speed_of(anchor.measured.kind, fit.measured) /
                          speed_of(anchor.measured.kind, simulated);
      // An efficiency the scenario refuses: the measurement is out of the model's reach (a
      // throughput of 1e12 asked for 6.6e9 and was refused at a line of the scenario validate
      // had written, as if the user had written it). Say so at the anchor's measured value.
      if (!(next >= kMinFitEfficiency && next <= kMaxFitEfficiency)) {
        throw Unsupported(anchor.measured_at.reason(fmt::format(
            "the measured {:g} is not reachable by the model: matching it needs a framework "
            "efficiency of {:.3g} (simulated {:.6g} at efficiency {:.6g}), outside {:g} to {:g}, "
            "the range of fitted efficiencies",
            fit.measured, next, simulated, efficiency, kMinFitEfficiency, kMaxFitEfficiency)));
      }
      efficiency = next;
    }
    if (!(std::abs(fit.residual_pct) <= options.fit_accept * 100.0)) {
      // The efficiency divides kernel time only; the host's fixed per-step time and exposed
      // communication stay as they are, so a measurement faster than those alone is out of
      // reach. Predicting from the last trial efficiency would silently carry that residual.
      throw Unsupported(fmt::format(
          "anchor fit did not converge: simulated {:.6g} samples/s at efficiency {:.6g} after {} "
          "simulations, {:+.2f}% from the measured {:.6g} (costs the efficiency does not scale, "
          "such as fixed per-step host time or exposed communication, may alone exceed the "
          "measured step)",
          fit.simulated, fit.efficiency, fit.simulations, fit.residual_pct, fit.measured));
    }
    fit.fitted = true;
  } catch (const common::Interrupted&) {
    throw;  // not this anchor's failure: the whole run stops
  } catch (const Unsupported& e) {
    fit.fitted = false;
    fit.skip_reason = e.what();
  } catch (const std::exception& e) {
    // One anchor's failure is reported with its points; the rest of the file still runs.
    fit.fitted = false;
    fit.failed = true;
    fit.skip_reason = fmt::format("simulation failed: {}", e.what());
  }
  return fit;
}

namespace {

// B of README 5.4: P's configuration reduced to `baseline_gpus` GPUs, same batch per GPU and
// GPUs per node (filled densely).
Configuration baseline_of(const ValidationPoint& p, int baseline_gpus,
                          const std::string& base_dir) {
  Configuration b = configuration_of(p, base_dir);
  const int per_node = p.gpus_per_node();
  b.gpus = baseline_gpus;
  b.nodes = baseline_gpus <= per_node ? 1 : (baseline_gpus + per_node - 1) / per_node;
  if (baseline_gpus == 1) b.strategy = Strategy::kNone;
  return b;
}

PointResult predict_point(const ValidationPoint& p, const AnchorFit& fit,
                          const ValidationFile& file, const Predictor& predictor,
                          const std::string& base_dir) {
  PointResult r;
  r.point = &p;
  r.measured = p.measured.value;
  if (!p.unsimulatable.empty()) {  // its own reason, at its own key, before its anchor's
    r.skip_reason = p.unsimulatable;
    return r;
  }
  if (!fit.fitted) {
    r.skip_reason = fmt::format("anchor {} not simulated: {}", fit.id, fit.skip_reason);
    r.failed = fit.failed;
    return r;
  }
  try {
    Configuration config = configuration_of(p, base_dir);
    config.framework_efficiency = fit.efficiency;
    r.prediction = predictor.predict(config);
    if (p.measured.kind != MeasuredKind::kScalingEfficiency) {
      r.predicted = metric_of(p, r.prediction);  // in the point's own metric
    } else {
      // Efficiency relative to the baseline B: the anchor, or P reduced to baseline_gpus.
      double base_throughput = fit.simulated;
      int base_gpus = file.find(p.anchor)->gpus;
      if (p.measured.baseline_gpus) {
        Configuration b = baseline_of(p, *p.measured.baseline_gpus, base_dir);
        b.framework_efficiency = fit.efficiency;
        base_throughput = predictor.predict(b).throughput_samples_per_s;
        base_gpus = b.gpus;
      }
      r.predicted =
          (r.prediction.throughput_samples_per_s / p.gpus) / (base_throughput / base_gpus);
    }
    r.error_pct = (r.predicted - r.measured) / r.measured * 100.0;
    r.simulated = true;
  } catch (const common::Interrupted&) {
    throw;  // not this point's failure: the whole run stops
  } catch (const Unsupported& e) {
    r.skip_reason = e.what();
  } catch (const std::exception& e) {
    r.failed = true;
    r.skip_reason = fmt::format("simulation failed: {}", e.what());
  }
  return r;
}

// Runs task(i) for i in [0, n) on `jobs` threads; the first exception is rethrown.
template <typename F>
void parallel_for(std::size_t n, int jobs, F&& task) {
  if (jobs <= 1 || n <= 1) {
    for (std::size_t i = 0; i < n; ++i) task(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs && static_cast<std::size_t>(t) < n; ++t) {
    threads.emplace_back([&] {
      for (std::size_t i = next++; i < n; i = next++) {
        try {
          task(i);
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace

int ValidationRun::failures() const {
  int n = 0;
  for (const PointResult& r : points) n += r.failed ? 1 : 0;
  for (const AnchorFit& a : anchors) n += a.failed ? 1 : 0;
  return n;
}

ValidationRun run_protocol(const ValidationFile& file, const Predictor& predictor,
                           const ProtocolOptions& options) {
  const std::string base_dir = base_dir_of(file.path);
  std::map<std::string, bool> named;
  for (const ValidationPoint& p : file.points) {
    if (p.role == Role::kPredict) named[p.anchor] = true;
  }
  ValidationRun run;
  std::map<std::string, std::size_t> fit_of;
  std::vector<const ValidationPoint*> anchors;
  std::vector<const ValidationPoint*> predicts;
  for (const ValidationPoint& p : file.points) {
    if (p.role == Role::kPredict) predicts.push_back(&p);
    if (p.role != Role::kAnchor) continue;
    if (!options.fit_unused_anchors && !named.count(p.id)) continue;
    fit_of[p.id] = anchors.size();
    anchors.push_back(&p);
  }
  // Results land in file order whatever order the threads finish in.
  run.anchors.resize(anchors.size());
  parallel_for(anchors.size(), options.jobs, [&](std::size_t i) {
    run.anchors[i] = fit_anchor(*anchors[i], base_dir, predictor, options);
  });
  run.points.resize(predicts.size());
  parallel_for(predicts.size(), options.jobs, [&](std::size_t i) {
    const ValidationPoint& p = *predicts[i];
    run.points[i] = predict_point(p, run.anchors[fit_of.at(p.anchor)], file, predictor, base_dir);
  });
  return run;
}

}  // namespace scalecast::validation
