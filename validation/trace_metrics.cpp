#include "validation/trace_metrics.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <set>

#include "common/config_error.hpp"
#include "validation/intervals.hpp"

namespace scalecast::validation {
namespace {

// GPU-side markers when the trace has them, else the host-side ones.
std::vector<IterationMarker> step_markers(const Trace& trace) {
  std::vector<IterationMarker> device;
  std::vector<IterationMarker> host;
  for (const IterationMarker& m : trace.markers) (m.on_device ? device : host).push_back(m);
  return device.empty() ? host : device;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// "1 event", "3 events".
std::string counted(std::size_t n, const char* noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

[[noreturn]] void fail(const Trace& trace, const std::string& message) {
  throw common::ConfigError(trace.source, 0, 0, "", message);
}

std::string busiest_device(const Trace& trace) {
  std::map<std::string, int> count;
  for (const TraceEvent& e : trace.events) {
    if (e.on_device) ++count[e.device];
  }
  std::string best;
  int most = 0;
  for (const auto& [device, n] : count) {
    if (n > most) {
      most = n;
      best = device;
    }
  }
  return best;
}

}  // namespace

std::vector<std::string> trace_devices(const Trace& trace) {
  std::set<std::string> devices;
  for (const TraceEvent& e : trace.events) {
    if (e.on_device) devices.insert(e.device);
  }
  return {devices.begin(), devices.end()};
}

void assign_iterations(Trace& trace) {
  const std::vector<IterationMarker> markers = step_markers(trace);
  if (markers.empty()) {
    for (TraceEvent& e : trace.events) {
      if (e.iteration < 0) e.iteration = 0;
    }
    return;
  }
  for (TraceEvent& e : trace.events) {
    if (e.iteration >= 0) continue;
    for (std::size_t i = 0; i < markers.size(); ++i) {
      const std::int64_t lo = markers[i].t_start_ns;
      const std::int64_t hi = trace.marker_windows_exact ? markers[i].t_end_ns
                              : i + 1 < markers.size()
                                  ? markers[i + 1].t_start_ns
                                  : markers[i].t_end_ns + (markers[i].t_end_ns - lo);
      if (e.t_start_ns >= lo && e.t_start_ns < hi) {
        e.iteration = static_cast<int>(i);
        break;
      }
    }
  }
}

TraceMetrics compute_metrics(Trace& trace, const EventClassifier& classifier,
                             const TraceMetricsOptions& options) {
  assign_iterations(trace);
  TraceMetrics out;
  out.device = options.device.empty() ? busiest_device(trace) : options.device;
  if (out.device.empty()) {
    fail(trace, fmt::format("expected device events (GPU kernels, memory copies or collectives), "
                            "found none (read as a {} trace: {}, {})",
                            trace.format, counted(trace.events.size(), "event"),
                            counted(trace.markers.size(), "step marker")));
  }
  const std::vector<IterationMarker> markers = step_markers(trace);
  // Without markers, iterations numbered by the source (our trace.json) or one for the file.
  int n_iter = markers.empty() ? 1 : static_cast<int>(markers.size());
  if (markers.empty()) {
    for (const TraceEvent& e : trace.events) n_iter = std::max(n_iter, e.iteration + 1);
  }
  struct Acc {
    std::vector<Interval> compute, comm, copy;
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
    std::int64_t last = std::numeric_limits<std::int64_t>::min();
    std::map<std::string, double> op_class_s;
    int events = 0;
  };
  std::vector<Acc> acc(static_cast<std::size_t>(n_iter));
  int device_events = 0;
  int other_events = 0;
  for (const TraceEvent& e : trace.events) {
    if (!e.on_device || e.device != out.device) continue;
    ++device_events;
    if (e.event_class == EventClass::kOther) ++other_events;
    if (e.iteration < 0 || e.iteration >= n_iter) continue;
    Acc& a = acc[static_cast<std::size_t>(e.iteration)];
    const Interval iv{e.t_start_ns, e.t_end_ns};
    if (e.event_class == EventClass::kCompute) a.compute.push_back(iv);
    if (e.event_class == EventClass::kComm) a.comm.push_back(iv);
    if (e.event_class == EventClass::kMemcpy) a.copy.push_back(iv);
    if (e.event_class == EventClass::kOther) continue;
    a.first = std::min(a.first, e.t_start_ns);
    a.last = std::max(a.last, e.t_end_ns);
    a.op_class_s[classifier.op_class(e)] += e.duration_ns() * 1e-9;
    ++a.events;
  }
  if (device_events == 0) {
    fail(trace, fmt::format("no device events on device \"{}\" (the trace's devices: {})",
                            out.device, fmt::join(trace_devices(trace), ", ")));
  }
  for (int i = 0; i < n_iter; ++i) {
    Acc& a = acc[static_cast<std::size_t>(i)];
    if (a.events == 0) continue;  // a marker with no device work (e.g. a trailing step)
    IterationMetrics m;
    m.index = i;
    const std::vector<Interval> k = interval_union(a.compute);
    const std::vector<Interval> c = interval_union(a.comm);
    const std::vector<Interval> mc = interval_union(a.copy);
    std::vector<Interval> all = k;
    all.insert(all.end(), c.begin(), c.end());
    all.insert(all.end(), mc.begin(), mc.end());
    const double busy_s = total_length(interval_union(all)) * 1e-9;
    const double span_s = (a.last - a.first) * 1e-9;
    if (markers.empty()) {
      m.iteration_s = span_s;
    } else {
      const IterationMarker& mk = markers[static_cast<std::size_t>(i)];
      const double marker_s = (mk.t_end_ns - mk.t_start_ns) * 1e-9;
      m.iteration_s = mk.on_device ? marker_s : std::max(marker_s, span_s);
    }
    m.compute_s = total_length(k) * 1e-9;
    m.comm_s = total_length(c) * 1e-9;
    m.overlapped_comm_s = intersection_length(c, k) * 1e-9;
    m.exposed_comm_s = m.comm_s - m.overlapped_comm_s;
    m.copy_s = total_length(mc) * 1e-9;
    m.idle_s = std::max(0.0, m.iteration_s - busy_s);
    m.op_class_s = a.op_class_s;
    out.iterations.push_back(m);
  }
  out.iteration_count = static_cast<int>(out.iterations.size());
  // A table of zeros compares nothing: say why no iteration is left.
  if (out.iteration_count == 0 && other_events == device_events) {
    fail(trace, fmt::format("the classification rules class all {} events on device \"{}\" as "
                            "'other': no compute, communication or copy time is left to compare",
                            device_events, out.device));
  }
  if (out.iteration_count == 0) {
    fail(trace, fmt::format("no event on device \"{}\" ({} in all) falls in an iteration the "
                            "step markers delimit ({} in all): no iteration to compare",
                            out.device, device_events, n_iter));
  }
  const int warmup = options.warmup >= 0 ? options.warmup : (out.iteration_count >= 3 ? 1 : 0);
  if (warmup >= out.iteration_count) {
    fail(trace, fmt::format("a warmup of {} leaves no steady iteration: the trace has {} "
                            "with device work on device \"{}\"; give a warmup (--warmup) of at "
                            "most {}",
                            warmup, counted(out.iteration_count, "iteration"), out.device,
                            out.iteration_count - 1));
  }
  std::vector<IterationMetrics> steady(out.iterations.begin() + warmup, out.iterations.end());
  out.steady_count = static_cast<int>(steady.size());
  auto med = [&](double IterationMetrics::*field) {
    std::vector<double> v;
    for (const IterationMetrics& m : steady) v.push_back(m.*field);
    return median_of(v);
  };
  out.median.iteration_s = med(&IterationMetrics::iteration_s);
  out.median.compute_s = med(&IterationMetrics::compute_s);
  out.median.comm_s = med(&IterationMetrics::comm_s);
  out.median.overlapped_comm_s = med(&IterationMetrics::overlapped_comm_s);
  out.median.exposed_comm_s = med(&IterationMetrics::exposed_comm_s);
  out.median.copy_s = med(&IterationMetrics::copy_s);
  out.median.idle_s = med(&IterationMetrics::idle_s);
  if (!(out.median.iteration_s > 0.0)) {
    fail(trace, fmt::format("the steady iterations on device \"{}\" ({} of {}) last 0 s "
                            "(zero-length step markers and events): no device time to compare",
                            out.device, out.steady_count, out.iteration_count));
  }
  std::map<std::string, std::vector<double>> per_class;
  for (const IterationMetrics& m : steady) {
    for (const auto& [cls, s] : m.op_class_s) per_class[cls];
  }
  for (auto& [cls, values] : per_class) {
    for (const IterationMetrics& m : steady) {
      const auto it = m.op_class_s.find(cls);
      values.push_back(it == m.op_class_s.end() ? 0.0 : it->second);
    }
    out.median.op_class_s[cls] = median_of(values);
  }
  return out;
}

}  // namespace scalecast::validation
