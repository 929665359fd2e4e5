#pragma once
// Readers of measured (and simulated) traces into the internal event model: Chrome trace event
// JSON (TF timeline, our own trace.json), PyTorch profiler (Kineto) JSON, Horovod timelines
// (possibly cut off before the closing bracket) and Nsight Systems SQLite exports. Malformed
// input is a common::ConfigError naming the file, the position or event and what was expected.

#include <string>

#include "validation/event_classifier.hpp"
#include "validation/trace_event.hpp"

namespace scalecast::validation {

enum class TraceFormat { kAuto, kChrome, kKineto, kHorovod, kNsys };

// "auto", "chrome", "kineto", "horovod", "nsys"; throws std::invalid_argument otherwise.
TraceFormat parse_trace_format(const std::string& text);

struct TraceReadOptions {
  TraceFormat format = TraceFormat::kAuto;
  // Names of step markers (Kineto ProfilerStep#N, NVTX "step 3", TF "iteration_7", ...).
  std::string step_pattern = "^(ProfilerStep#[0-9]+|[Ss]tep[ _#]?[0-9]+|[Ii]teration[ _#]?[0-9]+)$";
  EventClassifier classifier;
};

// Reads a trace file; the format is detected from its content unless options say otherwise.
// Events are classified and markers sorted; iterations are not assigned yet (trace_metrics).
Trace read_trace(const std::string& path, const TraceReadOptions& options = {});

// JSON dialects from text in memory (`name` stands for the file in messages). kAuto tells
// Kineto from plain Chrome by its top-level keys and categories.
Trace read_json_trace(const std::string& text, const std::string& name, TraceFormat format,
                      const TraceReadOptions& options);

// Nsight Systems SQLite export (`nsys export --type sqlite`).
Trace read_nsys_sqlite(const std::string& path, const TraceReadOptions& options);

}  // namespace scalecast::validation
