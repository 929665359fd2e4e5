#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

namespace scalecast::sim {

// Writes a Chrome/Perfetto trace event by event, byte for byte what dumping the whole document
// gives (`{"displayTimeUnit":"ns","traceEvents":[e1,e2,...]}` and a newline). A document of json
// objects held every event at about 2 kB: 5 MB per iteration of one Summit node, so 1,000
// iterations took 5 GB.
class TraceWriter {
 public:
  explicit TraceWriter(std::ostream& out) : out_(out) {
    out_ << R"({"displayTimeUnit":"ns","traceEvents":[)";
  }
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  ~TraceWriter() { out_ << "]}\n"; }

  void emit(const nlohmann::ordered_json& event) {
    if (!first_) out_ << ',';
    first_ = false;
    out_ << event.dump();
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

}  // namespace scalecast::sim
