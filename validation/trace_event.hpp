#pragma once
// One internal event model for every measured or simulated trace (reference
// docs/architecture.md, "Traces in"): each reader turns its format into TraceEvents with integer
// nanosecond times, the place they ran (rank, device, stream), a name and a class decided by
// ordered, configurable rules; step markers become IterationMarkers. Metrics (trace_metrics.hpp)
// only see this model.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scalecast::validation {

enum class EventClass { kCompute, kComm, kMemcpy, kOther };

std::string_view to_string(EventClass c);

struct TraceEvent {
  int rank = 0;
  std::string device;    // Chrome/Kineto pid, nsys deviceId, Horovod tensor
  std::string stream;    // Chrome/Kineto tid, nsys streamId
  std::string category;  // source category: Kineto/Chrome "cat", nsys table kind
  std::string name;
  std::int64_t t_start_ns = 0;
  std::int64_t t_end_ns = 0;
  bool on_device = false;  // ran on a device (GPU stream, or the simulated/CPU engine's streams)
  EventClass event_class = EventClass::kOther;
  std::string coll_type;  // communication: collective, when the source says
  double bytes = 0.0;     // communication: message bytes, when the source says
  std::string op_class;   // op class when the source states it (simulated trace args.class)
  int iteration = -1;     // step index it falls in; -1 outside every step

  std::int64_t duration_ns() const { return t_end_ns - t_start_ns; }
};

// A training-step marker span (Kineto ProfilerStep#N, an NVTX "step" range, ...).
struct IterationMarker {
  std::int64_t t_start_ns = 0;
  std::int64_t t_end_ns = 0;
  bool on_device = false;  // a GPU-side twin of the marker (Kineto gpu_user_annotation)
  std::string name;
};

struct Trace {
  std::string source;  // file name, for messages
  std::string format;  // "chrome", "kineto", "horovod", "nsys"
  std::vector<TraceEvent> events;
  std::vector<IterationMarker> markers;  // sorted by start
  // Markers are whole periods (Horovod): an iteration's window is exactly its marker, instead of
  // reaching to the next marker's start.
  bool marker_windows_exact = false;
};

}  // namespace scalecast::validation
