#pragma once
// Ordered regular-expression rules that decide an event's class (compute, comm, memcpy, other)
// and, for the per-op-class comparison, its op class (conv, gemm, normalization, ...). Defaults
// follow HTA and reference section 1 (nccl(Dev)Kernel -> comm, Memcpy/Memset -> memcpy, any
// other device event -> compute); users add rules first in the list, e.g. DeepEP's
// `dpsk::ep::` kernels as communication, which an `nccl` prefix would miss.

#include <regex>
#include <string>
#include <vector>

#include "validation/trace_event.hpp"

namespace scalecast::validation {

enum class RuleField { kName, kCategory, kStream };

struct ClassRule {
  RuleField field = RuleField::kName;
  std::string pattern;  // ECMAScript regex, searched (not anchored unless it says ^)
  EventClass event_class = EventClass::kCompute;
};

struct OpClassRule {
  std::string pattern;  // searched in the event name, case-insensitive
  std::string op_class;
};

class EventClassifier {
 public:
  // The default rules (see file comment).
  EventClassifier();
  // `rules` are tried first, then the defaults.
  explicit EventClassifier(const std::vector<ClassRule>& rules);

  // Class of an event: other for host-side events; for device events the first matching rule,
  // else compute.
  EventClass classify(const TraceEvent& event) const;
  // Sets event_class of every event (markers are untouched).
  void classify_all(Trace& trace) const;

  // Op class of a compute/comm/memcpy event for the per-class table ("comm", "memcpy", "conv",
  // "gemm", "normalization", "elementwise", "pooling", "softmax", "optimizer", "other").
  std::string op_class(const TraceEvent& event) const;

  // Parses "name:REGEX=comm", "cat:REGEX=memcpy", "stream:REGEX=compute" (field optional,
  // default name); throws std::invalid_argument with the expectation on bad text: no '=', an
  // empty pattern, an invalid regular expression or an unknown class.
  static ClassRule parse_rule(const std::string& text);

 private:
  struct Compiled {
    RuleField field;
    std::regex regex;
    EventClass event_class;
  };
  struct CompiledOp {
    std::regex regex;
    std::string op_class;
  };
  std::vector<Compiled> rules_;
  std::vector<CompiledOp> op_rules_;
};

}  // namespace scalecast::validation
