#pragma once
// Per-iteration metrics of a trace (reference section 1): iterations from step markers (the
// GPU-side twin when present), compute / communication / copy busy time as interval unions on
// one device, communication overlapped with and exposed beyond compute, idle time, and time per
// op class. The steady state is the median over iterations after the warm-up ones.

#include <map>
#include <string>
#include <vector>

#include "validation/event_classifier.hpp"
#include "validation/trace_event.hpp"

namespace scalecast::validation {

struct IterationMetrics {
  int index = -1;
  double iteration_s = 0.0;
  double compute_s = 0.0;                    // |K|, K = union of compute intervals
  double comm_s = 0.0;                       // |C|
  double overlapped_comm_s = 0.0;            // |C ∩ K|
  double exposed_comm_s = 0.0;               // |C \ K|
  double copy_s = 0.0;                       // |M|, M = union of memcpy/memset intervals
  double idle_s = 0.0;                       // iteration - |K ∪ C ∪ M|
  std::map<std::string, double> op_class_s;  // summed durations per op class
};

struct TraceMetricsOptions {
  int warmup = -1;     // iterations skipped at the start; -1: one when there are three or more
  std::string device;  // "" = the device with the most device events
};

struct TraceMetrics {
  std::string device;
  int iteration_count = 0;  // all iterations found
  int steady_count = 0;     // iterations the median is over
  std::vector<IterationMetrics> iterations;
  IterationMetrics median;  // field-wise median over the steady iterations
};

// The devices (pids, or their process names) that carry device events, sorted.
std::vector<std::string> trace_devices(const Trace& trace);

// Puts every device event into the iteration whose window contains its start: from one marker
// start to the next (device work lags host markers); the last window extends one step length
// past its marker. Events already assigned (nsys launch correlation, the iteration number of our
// own trace.json) keep their iteration; without markers the rest is iteration 0. Without
// markers, an iteration lasts from its first device event's start to its last one's end.
void assign_iterations(Trace& trace);

// A trace with nothing to compare is bad input (ConfigError naming trace.source): no device
// events, none on options.device, none the classification rules leave in an iteration, a warmup
// that leaves no steady iteration, or steady iterations of zero length.
TraceMetrics compute_metrics(Trace& trace, const EventClassifier& classifier,
                             const TraceMetricsOptions& options = {});

}  // namespace scalecast::validation
