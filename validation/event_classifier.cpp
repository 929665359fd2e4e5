#include "validation/event_classifier.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace scalecast::validation {
namespace {

const std::string& field_of(const TraceEvent& e, RuleField f) {
  switch (f) {
    case RuleField::kCategory:
      return e.category;
    case RuleField::kStream:
      return e.stream;
    case RuleField::kName:
      break;
  }
  return e.name;
}

// Reference section 1 (HTA, nccl-tests naming) plus Horovod's transfer phases (section 5) and
// the stream naming of our own traces ("comm", "h2d"/"copy").
std::vector<ClassRule> default_rules() {
  return {
      {RuleField::kName, "^nccl(Dev)?Kernel_", EventClass::kComm},
      {RuleField::kName, "^(NCCL|MPI)_(ALLREDUCE|ALLGATHER|BCAST|REDUCESCATTER|REDUCE|ALLTOALL)",
       EventClass::kComm},
      {RuleField::kName, "[Mm]emcpy|[Mm]emset|MEMCPY|MEMSET", EventClass::kMemcpy},
      {RuleField::kCategory, "^gpu_mem(cpy|set)$", EventClass::kMemcpy},
      // scalecast's own trace.json: category = stream ("compute", "comm", "copy"), thread
      // names "gpu0/comm".
      {RuleField::kCategory, "^comm$", EventClass::kComm},
      // An LLM run's trace.json (sim/llm_outputs.cpp): one thread per stream, category = stream;
      // TP, CP and DP collectives and the wait for a pipeline activation or gradient (which a
      // measured trace shows as NCCL's send/receive kernel) are communication.
      {RuleField::kCategory, "^(tp|cp|dp|pp_wait)$", EventClass::kComm},
      {RuleField::kCategory, "^copy$", EventClass::kMemcpy},
      {RuleField::kStream, "(^|/)comm", EventClass::kComm},
      {RuleField::kStream, "(^|/)(copy|h2d|d2h)", EventClass::kMemcpy},
  };
}

// Kernel and op naming of cuDNN/cuBLAS/PyTorch/TF and of our own op names
// ("layer1.0.conv2.wgrad", "fc.fwd"); first match wins, conv before gemm because cuDNN's
// implicit-GEMM convolutions carry "gemm" in their names.
const std::vector<std::pair<std::string, std::string>>& default_op_rules() {
  static const std::vector<std::pair<std::string, std::string>> rules = {
      // Layer names of fully connected layers first: their ".wgrad" is a GEMM, not a conv.
      {"(^|[._/])(fc|linear|dense|classifier)[0-9]*([._/]|$)", "gemm"},
      {"conv|wgrad|dgrad|winograd|implicit_gemm|implicit_convolve|fprop|xmma_fprop|scudnn", "conv"},
      {"gemm|matmul|cublas|addmm|(^|[._/])(mm|bmm|fc|linear|dense)([._/]|$)", "gemm"},
      {"norm|(^|[._/])bn[0-9]*([._/]|$)", "normalization"},
      {"pool", "pooling"},
      {"softmax|cross_?entropy|nll_loss|(^|[._/])loss", "softmax"},
      {"sgd|adam|lamb|momentum|multi_tensor|optimizer|apply_gradient", "optimizer"},
      {"relu|elementwise|add|mul|sigmoid|gelu|dropout|tanh|vectorized|unrolled|fill|residual",
       "elementwise"},
  };
  return rules;
}

}  // namespace

std::string_view to_string(EventClass c) {
  switch (c) {
    case EventClass::kCompute:
      return "compute";
    case EventClass::kComm:
      return "comm";
    case EventClass::kMemcpy:
      return "memcpy";
    case EventClass::kOther:
      return "other";
  }
  return "?";
}

EventClassifier::EventClassifier() : EventClassifier(std::vector<ClassRule>{}) {}

EventClassifier::EventClassifier(const std::vector<ClassRule>& rules) {
  std::vector<ClassRule> all = rules;
  for (const ClassRule& r : default_rules()) all.push_back(r);
  for (const ClassRule& r : all) {
    try {
      rules_.push_back({r.field, std::regex(r.pattern), r.event_class});
    } catch (const std::regex_error& e) {
      throw std::invalid_argument(fmt::format(
          "classification rule: invalid regular expression \"{}\": {}", r.pattern, e.what()));
    }
  }
  for (const auto& [pattern, op_class] : default_op_rules()) {
    op_rules_.push_back({std::regex(pattern, std::regex::icase), op_class});
  }
}

EventClass EventClassifier::classify(const TraceEvent& event) const {
  // Host-side spans (cpu_op, cuda_runtime, annotations) are never device busy time.
  if (!event.on_device) return EventClass::kOther;
  for (const Compiled& r : rules_) {
    if (std::regex_search(field_of(event, r.field), r.regex)) return r.event_class;
  }
  return EventClass::kCompute;
}

void EventClassifier::classify_all(Trace& trace) const {
  for (TraceEvent& e : trace.events) e.event_class = classify(e);
}

std::string EventClassifier::op_class(const TraceEvent& event) const {
  if (event.event_class == EventClass::kComm) return "comm";
  if (event.event_class == EventClass::kMemcpy) return "memcpy";
  if (!event.op_class.empty()) return event.op_class;
  for (const CompiledOp& r : op_rules_) {
    if (std::regex_search(event.name, r.regex)) return r.op_class;
  }
  return "other";
}

ClassRule EventClassifier::parse_rule(const std::string& text) {
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument(fmt::format("classification rule \"{}\": {}", text, why));
  };
  const std::size_t eq = text.rfind('=');
  if (eq == std::string::npos) {
    fail("expected [name:|cat:|stream:]REGEX=compute|comm|memcpy|other (no '=')");
  }
  ClassRule rule;
  std::string pattern = text.substr(0, eq);
  const std::string cls = text.substr(eq + 1);
  if (pattern.rfind("name:", 0) == 0) {
    pattern = pattern.substr(5);
  } else if (pattern.rfind("cat:", 0) == 0) {
    rule.field = RuleField::kCategory;
    pattern = pattern.substr(4);
  } else if (pattern.rfind("stream:", 0) == 0) {
    rule.field = RuleField::kStream;
    pattern = pattern.substr(7);
  }
  // An empty pattern matches every event: a rule for all of them is almost surely a slip.
  if (pattern.empty()) fail("empty pattern before '=' (expected a regular expression, e.g. ^dpsk)");
  if (cls == "compute") {
    rule.event_class = EventClass::kCompute;
  } else if (cls == "comm") {
    rule.event_class = EventClass::kComm;
  } else if (cls == "memcpy") {
    rule.event_class = EventClass::kMemcpy;
  } else if (cls == "other") {
    rule.event_class = EventClass::kOther;
  } else {
    fail(fmt::format("class must be compute, comm, memcpy or other, got \"{}\"", cls));
  }
  try {
    const std::regex check(pattern);
  } catch (const std::regex_error& e) {
    fail(fmt::format("invalid regular expression \"{}\": {}", pattern, e.what()));
  }
  rule.pattern = pattern;
  return rule;
}

}  // namespace scalecast::validation
