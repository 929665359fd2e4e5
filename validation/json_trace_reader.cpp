// Chrome trace event JSON and its dialects: Kineto (PyTorch profiler) and Horovod timelines.
// Formats: [Chrome-trace], [Kineto], [Horovod-timeline] (docs/sources.md).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "common/config_error.hpp"
#include "validation/trace_reader.hpp"

namespace scalecast::validation {
namespace {

using Json = nlohmann::json;
using common::ConfigError;

// Kineto categories of host-side work; their spans are never device busy time.
const std::set<std::string>& host_categories() {
  static const std::set<std::string> cats = {
      "cpu_op", "user_annotation", "python_function",   "cuda_runtime", "cuda_driver", "overhead",
      "Trace",  "Runtime",         "cpu_instant_event", "fwdbwd",       "ac2g"};
  return cats;
}

[[noreturn]] void fail(const std::string& name, const std::string& where, const std::string& msg) {
  throw ConfigError(name, 0, 0, where, msg);
}

// "Line:column" of a byte offset, for JSON syntax errors.
std::pair<int, int> line_col(const std::string& text, std::size_t byte) {
  int line = 1;
  int col = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// Deepest nesting of arrays and objects accepted: real traces nest 3 or 4 deep; a hostile file
// nested 100,000 deep would exhaust the stack of the recursive JSON value code.
constexpr int kMaxJsonDepth = 256;

// Refuses nesting deeper than kMaxJsonDepth before parsing (brackets inside strings skipped).
void check_json_depth(const std::string& text, const std::string& name) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        const auto [line, col] = line_col(text, i + 1);
        throw ConfigError(name, line, col, "",
                          fmt::format("JSON nested deeper than {} levels", kMaxJsonDepth));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

Json parse_json(const std::string& text, const std::string& name) {
  check_json_depth(text, name);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    const auto [line, col] = line_col(text, e.byte);
    // nlohmann's message starts "[json.exception.parse_error.101] parse error at line L, ..."
    std::string what = e.what();
    const std::size_t colon = what.find(": ");
    const std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    throw ConfigError(name, line, col, "", "invalid JSON: " + detail);
  }
}

// A Horovod timeline is written incrementally; a job that did not shut down cleanly leaves it
// without the closing bracket (and often with a trailing comma).
std::string close_horovod_array(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  if (!text.empty() && text.back() == ']') return text;
  while (!text.empty() &&
         (text.back() == ',' || std::isspace(static_cast<unsigned char>(text.back())))) {
    text.pop_back();
  }
  return text + "]";
}

std::string id_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) return fmt::format("{}", v.get<double>());
  return "";
}

constexpr double kMaxMicroseconds = 4e15;

double number(const Json& event, const char* key, const std::string& name,
              const std::string& where) {
  const auto it = event.find(key);
  if (it == event.end()) fail(name, where, fmt::format("missing '{}' (microseconds)", key));
  if (!it->is_number()) {
    fail(name, where + "." + key,
         fmt::format("expected a number of microseconds, got {}", it->dump()));
  }
  const double v = it->get<double>();
  // Microseconds; 4e15 us (about 127 years, beyond any epoch timestamp) keeps every start +
  // duration in nanoseconds inside a 64-bit integer.
  if (!std::isfinite(v) || std::fabs(v) > kMaxMicroseconds)
    fail(name, where + "." + key,
         fmt::format("expected a finite number of microseconds within +-{:g}, got {}",
                     kMaxMicroseconds, it->dump()));
  return v;
}

std::int64_t to_ns(double us) { return std::llround(us * 1000.0); }

struct Open {
  std::string name;
  std::string cat;
  std::int64_t t_ns;
  std::size_t index;
  Json args;
};

class Builder {
 public:
  Builder(const std::string& name, TraceFormat dialect, const TraceReadOptions& options)
      : name_(name), dialect_(dialect), step_(options.step_pattern) {}

  void add(const Json& e, std::size_t index) {
    const std::string where = fmt::format("traceEvents[{}]", index);
    if (!e.is_object())
      fail(name_, where, fmt::format("expected an event object, got {}", e.dump()));
    const auto ph_it = e.find("ph");
    if (ph_it == e.end() || !ph_it->is_string()) {
      fail(name_, where, "missing 'ph' (the event phase, a string such as \"X\")");
    }
    const std::string ph = ph_it->get<std::string>();
    const std::string pid = e.contains("pid") ? id_text(e["pid"]) : "0";
    const std::string tid = e.contains("tid") ? id_text(e["tid"]) : "0";
    const std::string ev_name =
        e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "";
    const std::string cat =
        e.contains("cat") && e["cat"].is_string() ? e["cat"].get<std::string>() : "";
    const Json args = e.contains("args") ? e["args"] : Json::object();
    if (ph == "M") {
      if (args.is_object() && args.contains("name") && args["name"].is_string()) {
        if (ev_name == "process_name") process_names_[pid] = args["name"].get<std::string>();
        if (ev_name == "thread_name")
          thread_names_[pid + "/" + tid] = args["name"].get<std::string>();
      }
      return;
    }
    if (ph == "X") {
      const std::int64_t t = to_ns(number(e, "ts", name_, where));
      double dur_us = 0.0;
      if (e.contains("dur") || dialect_ != TraceFormat::kHorovod)
        dur_us = number(e, "dur", name_, where);
      if (dur_us < 0)
        fail(name_, where + ".dur", fmt::format("expected a duration >= 0, got {}", dur_us));
      emit(pid, tid, ev_name, cat, t, t + to_ns(dur_us), args);
      return;
    }
    if (ph == "B") {
      stacks_[{pid, tid}].push_back(
          {ev_name, cat, to_ns(number(e, "ts", name_, where)), index, args});
      return;
    }
    if (ph == "E") {
      auto& stack = stacks_[{pid, tid}];
      if (stack.empty()) {
        fail(name_, where,
             fmt::format("'E' event without a matching 'B' on pid {} tid {}", pid, tid));
      }
      Open open = std::move(stack.back());
      stack.pop_back();
      const std::int64_t t = to_ns(number(e, "ts", name_, where));
      if (t < open.t_ns) {
        fail(name_, where,
             fmt::format("'E' at {} us ends before its 'B' (traceEvents[{}]) at {} us", t / 1000.0,
                         open.index, open.t_ns / 1000.0));
      }
      emit(pid, tid, open.name, open.cat, open.t_ns, t, open.args);
    }
    // Instants, counters, flows, async and object events carry no busy time.
  }

  Trace finish(TraceFormat format) {
    for (const auto& [key, stack] : stacks_) {
      // A Horovod timeline cut off mid-run leaves activities open: they never finished.
      if (!stack.empty() && dialect_ != TraceFormat::kHorovod) {
        fail(name_, fmt::format("traceEvents[{}]", stack.back().index),
             fmt::format("'B' event \"{}\" on pid {} tid {} is never closed by an 'E'",
                         stack.back().name, key.first, key.second));
      }
    }
    Trace trace;
    trace.source = name_;
    trace.format = format == TraceFormat::kKineto    ? "kineto"
                   : format == TraceFormat::kHorovod ? "horovod"
                                                     : "chrome";
    for (Raw& r : raw_) {
      TraceEvent& ev = r.event;
      const auto pn = process_names_.find(ev.device);
      const auto tn = thread_names_.find(ev.device + "/" + ev.stream);
      if (tn != thread_names_.end()) ev.stream = tn->second;
      if (pn != process_names_.end()) ev.device = pn->second;
      if (dialect_ == TraceFormat::kHorovod) {
        // Each Horovod "process" is a tensor of the one rank that wrote the file.
        ev.stream = ev.device;
        ev.device = "horovod";
      }
      if (std::regex_match(ev.name, step_) && dialect_ != TraceFormat::kHorovod) {
        trace.markers.push_back(
            {ev.t_start_ns, ev.t_end_ns, ev.category == "gpu_user_annotation", ev.name});
        continue;
      }
      trace.events.push_back(std::move(ev));
    }
    if (dialect_ == TraceFormat::kHorovod) horovod_markers(trace);
    std::sort(trace.markers.begin(), trace.markers.end(),
              [](const IterationMarker& a, const IterationMarker& b) {
                return a.t_start_ns < b.t_start_ns ||
                       (a.t_start_ns == b.t_start_ns && a.on_device < b.on_device);
              });
    return trace;
  }

 private:
  struct Raw {
    TraceEvent event;
  };

  void emit(const std::string& pid, const std::string& tid, const std::string& ev_name,
            const std::string& cat, std::int64_t t0, std::int64_t t1, const Json& args) {
    TraceEvent ev;
    ev.device = pid;
    ev.stream = tid;
    ev.name = ev_name;
    ev.category = cat;
    ev.t_start_ns = t0;
    ev.t_end_ns = t1;
    if (dialect_ == TraceFormat::kHorovod) {
      // Only the transfer phases and fusion-buffer copies are work; the rest is waiting.
      ev.on_device = std::regex_search(ev_name, std::regex("^(NCCL|MPI)_|^MEMCPY_"));
    } else if (dialect_ == TraceFormat::kKineto) {
      ev.on_device = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
    } else {
      ev.on_device = !host_categories().count(cat) && cat != "gpu_user_annotation";
    }
    if (args.is_object()) {
      if (args.contains("Collective name") && args["Collective name"].is_string()) {
        ev.coll_type = args["Collective name"].get<std::string>();
      }
      if (args.contains("In msg nelems") && args["In msg nelems"].is_number()) {
        const std::string dtype = args.value("dtype", std::string("Float"));
        const double size = dtype == "Half" || dtype == "BFloat16" ? 2.0
                            : dtype == "Double"                    ? 8.0
                                                                   : 4.0;
        ev.bytes = args["In msg nelems"].get<double>() * size;
      }
      if (args.contains("bytes") && args["bytes"].is_number())
        ev.bytes = args["bytes"].get<double>();
      if (args.contains("class") && args["class"].is_string())
        ev.op_class = args["class"].get<std::string>();
      // scalecast's trace.json numbers the iteration of every event.
      if (args.contains("iteration") && args["iteration"].is_number_integer()) {
        ev.iteration = args["iteration"].get<int>();
      }
    }
    raw_.push_back({std::move(ev)});
  }

  // Horovod has no step markers: the period of successive all-reduces of the tensor reduced
  // most often stands for the iteration (reference section 5).
  void horovod_markers(Trace& trace) {
    std::map<std::string, std::vector<std::int64_t>> starts;
    for (const TraceEvent& e : trace.events) {
      if (e.name == "ALLREDUCE" || e.name == "ALLGATHER" || e.name == "BROADCAST") {
        starts[e.stream].push_back(e.t_start_ns);
      }
    }
    const std::vector<std::int64_t>* best = nullptr;
    for (const auto& [tensor, s] : starts) {
      if (best == nullptr || s.size() > best->size()) best = &s;
    }
    if (best == nullptr) return;
    trace.marker_windows_exact = true;
    std::vector<std::int64_t> s = *best;
    std::sort(s.begin(), s.end());
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      trace.markers.push_back({s[i], s[i + 1], false, fmt::format("period {}", i)});
    }
  }

  std::string name_;
  TraceFormat dialect_;
  std::regex step_;
  std::map<std::string, std::string> process_names_;
  std::map<std::string, std::string> thread_names_;
  std::map<std::pair<std::string, std::string>, std::vector<Open>> stacks_;
  std::vector<Raw> raw_;
};

bool looks_like_kineto(const Json& root) {
  if (!root.is_object()) return false;
  if (root.contains("schemaVersion") || root.contains("deviceProperties") ||
      root.contains("distributedInfo")) {
    return true;
  }
  for (const Json& e : root["traceEvents"]) {
    if (e.is_object() && e.contains("cat") && e["cat"].is_string()) {
      const std::string cat = e["cat"].get<std::string>();
      if (cat == "kernel" || cat == "cpu_op" || cat == "gpu_memcpy") return true;
    }
  }
  return false;
}

}  // namespace

Trace read_json_trace(const std::string& text, const std::string& name, TraceFormat format,
                      const TraceReadOptions& options) {
  const Json root =
      parse_json(format == TraceFormat::kHorovod ? close_horovod_array(text) : text, name);
  const Json* events = nullptr;
  if (root.is_array()) {
    events = &root;
  } else if (root.is_object() && root.contains("traceEvents")) {
    events = &root["traceEvents"];
    if (!events->is_array()) fail(name, "traceEvents", "expected an array of events");
  } else {
    fail(name, "", "expected a JSON array of trace events or an object with \"traceEvents\"");
  }
  if (format == TraceFormat::kAuto) {
    format = looks_like_kineto(root) ? TraceFormat::kKineto : TraceFormat::kChrome;
  }
  Builder builder(name, format, options);
  for (std::size_t i = 0; i < events->size(); ++i) builder.add((*events)[i], i);
  Trace trace = builder.finish(format);
  options.classifier.classify_all(trace);
  return trace;
}

}  // namespace scalecast::validation
