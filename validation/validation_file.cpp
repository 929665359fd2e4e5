#include "validation/validation_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/config_node.hpp"
#include "models/transformer.hpp"
#include "sim/scenario_allreduce.hpp"
#include "sim/scenario_keys.hpp"

namespace scalecast::validation {
namespace {

using common::ConfigNode;

constexpr const char* kSchema = "scalecast-validation/1";
// A measured throughput: a thousandth of a sample per second to a trillion (all of Frontier's
// GPUs on ResNet-50 would read about 1e8 images/s).
constexpr double kMinThroughput = 1e-3;
constexpr double kMaxThroughput = 1e12;
// The smallest measured scaling efficiency, MFU or HFU: 0.1 %.
constexpr double kMinFraction = 1e-3;

// One of a fixed set of words; the message lists them.
std::string one_of(const ConfigNode& node, const std::vector<std::string>& allowed) {
  const std::string value = node.as_string();
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return value;
  node.fail(fmt::format("expected one of {}, got \"{}\"", fmt::join(allowed, ", "), value));
}

int positive_int(const ConfigNode& node) { return node.as_int_field(1, 1'000'000'000); }

std::string non_empty_string(const ConfigNode& node) {
  std::string s = node.as_string();
  if (s.empty()) node.fail("expected a non-empty string");
  return s;
}

// A point id is printed in tables on a terminal: a control character (a YAML escape such as
// "\u0007" gets one past the file's own byte check) or a bidirectional override (U+202E turns
// the rest of the row around) would garble or disguise the row. Returns the id.
std::string printable_id(const ConfigNode& node) {
  const std::string id = non_empty_string(node);
  for (std::size_t i = 0; i < id.size(); ++i) {
    const auto b = [&](std::size_t k) {
      return k < id.size() ? static_cast<unsigned char>(id[k]) : 0u;
    };
    const unsigned c = b(i);
    const bool c0 = c < 0x20 || c == 0x7f, c1 = c == 0xc2 && b(i + 1) >= 0x80 && b(i + 1) <= 0x9f;
    const bool bidi =
        (c == 0xe2 && b(i + 1) == 0x80 &&
         (b(i + 2) == 0x8e || b(i + 2) == 0x8f || (b(i + 2) >= 0xaa && b(i + 2) <= 0xae))) ||
        (c == 0xe2 && b(i + 1) == 0x81 && b(i + 2) >= 0xa6 && b(i + 2) <= 0xa9) ||
        (c == 0xd8 && b(i + 1) == 0x9c);
    if (c0 || c1 || bidi)
      node.fail(
          fmt::format("expected an id without control or bidirectional-override characters "
                      "(byte {} of it is one: 0x{:02x})",
                      i + 1, c));
  }
  return id;
}

// The LLM metrics of parallel points (section 9), in the file's key order.
const std::vector<std::pair<std::string, MeasuredKind>>& llm_metrics() {
  static const std::vector<std::pair<std::string, MeasuredKind>> m = {
      {"tokens_per_s_per_gpu", MeasuredKind::kTokensPerSecondPerGpu},
      {"iteration_s", MeasuredKind::kIterationSeconds},
      {"mfu", MeasuredKind::kMfu},
      {"hfu", MeasuredKind::kHfu},
      {"tflops_per_gpu", MeasuredKind::kTflopsPerGpu}};
  return m;
}

struct MetricRange {
  double lo;
  double hi;
  const char* what;
};

// The range a measured LLM metric of a real run lies in (FORMAT.md section 9).
MetricRange llm_metric_range(MeasuredKind kind) {
  switch (kind) {
    case MeasuredKind::kTokensPerSecondPerGpu:
      return {1e-3, 1e9, "tokens/s per GPU"};
    case MeasuredKind::kIterationSeconds:
      return {1e-6, 1e6, "an iteration time in seconds"};
    case MeasuredKind::kTflopsPerGpu:
      return {1e-3, 1e5, "TFLOP/s per GPU"};
    default:  // mfu, hfu
      return {kMinFraction, 1.0, "a fraction"};
  }
}

Measured parse_llm_measured(const ConfigNode& node) {
  std::vector<std::string> keys;
  for (const auto& [key, kind] : llm_metrics()) keys.push_back(key);
  if (!node.is_map())
    node.fail(fmt::format("expected a map with one of {}", fmt::join(keys, ", ")));
  std::vector<std::string> allowed = keys;
  allowed.push_back("flops");
  node.check_keys(allowed);
  Measured m;
  int found = 0;
  for (const auto& [key, kind] : llm_metrics()) {
    if (!node.has(key)) continue;
    ++found;
    const ConfigNode v = node.required(key);
    m.kind = kind;
    m.value = v.as_double();
    // What a real run can measure: a denormal mfu printed an error of +inf and a MAPE of inf
    // (exit 0), and 1e-300 a 300-digit error.
    const auto [lo, hi, what] = llm_metric_range(kind);
    if (!(m.value >= lo && m.value <= hi))
      v.fail(fmt::format("expected {} from {:g} to {:g}, got {}", what, lo, hi, v.as_string()));
  }
  if (found != 1) node.fail(fmt::format("expected exactly one of {}", fmt::join(keys, ", ")));
  if (auto f = node.optional("flops")) {
    if (m.kind != MeasuredKind::kMfu && m.kind != MeasuredKind::kHfu)
      f->fail("only with mfu or hfu (how the source counted model FLOPs)");
    const std::string c = one_of(*f, {"model", "causal", "all_params"});
    m.flops = c == "causal"       ? models::FlopConvention::kCausal
              : c == "all_params" ? models::FlopConvention::kAllParams
                                  : models::FlopConvention::kModel;
  }
  return m;
}

Measured parse_measured(const ConfigNode& node) {
  if (!node.is_map()) node.fail("expected a map with throughput or scaling_efficiency");
  for (const auto& [key, kind] : llm_metrics()) {
    if (node.has(key)) {
      node.required(key).fail("an LLM metric: only points with strategy \"parallel\" give it");
    }
  }
  node.check_keys({"throughput", "scaling_efficiency", "baseline_gpus"});
  const bool has_t = node.has("throughput");
  const bool has_e = node.has("scaling_efficiency");
  if (has_t == has_e) node.fail("expected exactly one of throughput, scaling_efficiency");
  Measured m;
  if (has_t) {
    if (node.has("baseline_gpus")) {
      node.required("baseline_gpus").fail("only allowed with scaling_efficiency");
    }
    const ConfigNode t = node.required("throughput");
    m.kind = MeasuredKind::kThroughput;
    m.value = t.as_double();
    // Samples per second of a real run: a denormal value made the anchor fit fail in a
    // temporary scenario (validate then exited 0 with nothing validated), and 1e308 printed a
    // 300-digit measurement.
    if (!(m.value >= kMinThroughput && m.value <= kMaxThroughput))
      t.fail(fmt::format("expected a throughput (samples/s) from {:g} to {:g}, got {}",
                         kMinThroughput, kMaxThroughput, t.as_string()));
    return m;
  }
  const ConfigNode e = node.required("scaling_efficiency");
  m.kind = MeasuredKind::kScalingEfficiency;
  m.value = e.as_double();
  if (!(m.value >= kMinFraction && m.value <= 1.0)) {
    e.fail(fmt::format("expected a fraction from {:g} to 1, got {}", kMinFraction, e.as_string()));
  }
  if (auto b = node.optional("baseline_gpus")) m.baseline_gpus = positive_int(*b);
  return m;
}

// A parallel point's `parallel` map, checked with parse_parallel() for its model when the model
// is a transformer of the LLM zoo (an unknown model is left for `validate` to skip).
void parse_parallel_of(const ConfigNode& node, ValidationPoint& p) {
  const ConfigNode map = node.required("parallel");
  p.parallel_node = map;
  if (!map.is_map()) map.fail("expected a map of parallel settings (tp, pp, dp, ...)");
  for (const char* key : {"seq_len", "precision"}) {
    if (map.has(key)) {
      map.required(key).fail(
          fmt::format("given by the point's own `{}` key, not inside `parallel`", key));
    }
  }
  auto model = models::find_transformer(p.model);
  if (!model) return;
  model->seq_len = *p.seq_len;  // parse_parallel's default sequence: the point's
  models::ParallelConfig c = models::parse_parallel(map, *model, p.gpus);
  c.precision = p.precision == "fp8"        ? models::LlmPrecision::kFp8
                : p.precision == "amp_fp16" ? models::LlmPrecision::kFp16
                                            : models::LlmPrecision::kBf16;
  p.parallel = c;
}

// A point's `allreduce` map (FORMAT.md section 2): a subset of the scenario's `allreduce` keys,
// read by the scenario's own reader (sim::load_allreduce: types, bounds, which key goes with
// which rule), so a fault fails here at file:line, then passed on as written. Two rules are the
// point's own: a bucket size a source states is never 0 (the scenario's "one bucket per tensor"
// and "the cap"), and packs take no fusion buffer.
std::vector<std::pair<std::string, std::string>> parse_exchange(const ConfigNode& map) {
  if (!map.is_map()) map.fail("expected a map of gradient-exchange settings (bucketing, ...)");
  const std::vector<std::string> keys = {"bucketing", "fusion_buffer", "first_bucket", "packs",
                                         "after_backward"};
  map.check_keys(keys);
  sim::AllReduceConfig read;
  sim::load_allreduce(map, read);
  if (read.bucketing == sim::Bucketing::kPacks && map.has("fusion_buffer"))
    map.required("fusion_buffer").fail("not used with bucketing: packs (packs cut the gradient)");
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& key : keys) {
    const auto v = map.optional(key);
    if (!v) continue;
    const bool size = key == "fusion_buffer" || key == "first_bucket";
    if (size && !(v->as_quantity(common::Quantity::kSize) > 0.0))
      v->fail("expected a size above 0");
    out.emplace_back(key, v->as_string());
  }
  return out;
}

ValidationPoint parse_point(const ConfigNode& node) {
  if (!node.is_map()) node.fail("expected a map (one measured point)");
  node.check_keys({"id",
                   "system",
                   "network",
                   "model",
                   "family",
                   "seq_len",
                   "tokens_per_sample",
                   "attention",
                   "precision",
                   "framework",
                   "strategy",
                   "comm",
                   "batch_per_gpu",
                   "accumulation",
                   "allreduce",
                   "gpus",
                   "nodes",
                   "parallel",
                   "measured",
                   "role",
                   "anchor",
                   "source",
                   "notes"});
  ValidationPoint p;
  p.line = node.line();
  p.id = printable_id(node.required("id"));
  p.system = non_empty_string(node.required("system"));
  p.system_at = KeyAt::of(node.required("system"));
  if (auto n = node.optional("network")) p.network = n->as_string();
  p.model = non_empty_string(node.required("model"));
  p.model_at = KeyAt::of(node.required("model"));
  if (auto s = node.optional("seq_len")) {
    p.seq_len = positive_int(*s);
    p.seq_len_at = KeyAt::of(*s);
  }
  const ConfigNode strategy = node.required("strategy");
  const std::string s = one_of(
      strategy, {"none", "allreduce", "parameter_server", "parameter_server_cpu", "parallel"});
  p.strategy = s == "none"                   ? Strategy::kNone
               : s == "allreduce"            ? Strategy::kAllreduce
               : s == "parameter_server"     ? Strategy::kParameterServer
               : s == "parameter_server_cpu" ? Strategy::kParameterServerCpu
                                             : Strategy::kParallel;
  const bool parallel = p.strategy == Strategy::kParallel;
  if (parallel != node.has("parallel")) {
    (parallel ? strategy : node.required("parallel"))
        .fail("strategy \"parallel\" and a `parallel` map go together");
  }
  p.precision = parallel
                    ? one_of(node.required("precision"), {"bf16", "amp_fp16", "fp8"})
                    : one_of(node.required("precision"), {"fp32", "amp_fp16", "tf32", "unknown"});
  p.framework = one_of(
      node.required("framework"),
      parallel
          ? std::vector<std::string>{"megatron", "nemo", "megatron-bridge", "torchtitan", "pytorch"}
          : std::vector<std::string>{"tensorflow", "pytorch", "mxnet", "caffe2", "chainer", "nnl"});
  if (parallel) {
    p.family = non_empty_string(node.required("family"));
    if (!p.seq_len) node.required("seq_len");  // fails: a parallel point states its sequence
    if (node.has("batch_per_gpu")) {
      node.required("batch_per_gpu")
          .fail(
              "not used with strategy \"parallel\": parallel.global_batch and micro_batch say it");
    }
    if (node.has("comm")) node.required("comm").fail("not used with strategy \"parallel\"");
  } else if (node.has("family")) {
    node.required("family").fail("only points with strategy \"parallel\" name a family");
  }
  if (auto c = node.optional("comm")) {
    if (!c->is_sequence()) c->fail("expected a list of strings");
    // FORMAT.md section 2: one library that reduces the gradients and one transport that moves
    // them. [nccl, mpi_cpu] simulated mpi_cpu alone, and [tcp, rdma] was refused as a duplicate
    // key of a scenario validate had written, not at this key. A conflict is reported at the
    // entry that makes it (the list's own position is its first entry in a block list).
    const auto has = [&](const char* word) {
      return std::find(p.comm.begin(), p.comm.end(), word) != p.comm.end();
    };
    for (const ConfigNode& item : c->items()) {
      const std::string word = one_of(item, {"nccl", "mpi_cpu", "tcp", "rdma"});
      if (has(word.c_str())) item.fail(fmt::format("\"{}\" is listed twice", word));
      if ((word == "nccl" && has("mpi_cpu")) || (word == "mpi_cpu" && has("nccl")))
        item.fail(
            "nccl and mpi_cpu are two libraries (GPU collectives, MPI reducing on the CPU); "
            "expected at most one of them");
      if ((word == "tcp" && has("rdma")) || (word == "rdma" && has("tcp")))
        item.fail("tcp and rdma are two transports; expected at most one of them");
      p.comm.push_back(word);
    }
    if (p.comm.empty())
      c->fail(
          "expected one or more of nccl, mpi_cpu, tcp, rdma (leave comm out where the "
          "source does not say)");
  }
  if (auto t = node.optional("tokens_per_sample")) {
    // A mean over the samples of a data-parallel run (an LLM point's tokens are its seq_len).
    if (parallel) t->fail("not used with strategy \"parallel\": seq_len gives its tokens");
    if (!p.seq_len) t->fail("expected only with seq_len (the length it is at most)");
    const int tokens = positive_int(*t);
    if (tokens > *p.seq_len)
      t->fail(fmt::format("expected at most seq_len ({}), got {}", *p.seq_len, tokens));
    p.tokens_per_sample = tokens;
  }
  if (auto a = node.optional("attention")) {
    // How a data-parallel transformer's recipe runs attention (an LLM point's parallel map says).
    if (parallel) a->fail("not used with strategy \"parallel\": parallel.flash_attention says it");
    if (!p.seq_len) a->fail("expected only with seq_len (a model with attention layers)");
    p.fused_attention = one_of(*a, {"fused", "unfused"}) == "fused";
  }
  if (!parallel) p.batch_per_gpu = positive_int(node.required("batch_per_gpu"));
  if (auto a = node.optional("accumulation")) {
    if (parallel) a->fail("not used with strategy \"parallel\": parallel.global_batch says it");
    p.accumulation = a->as_int_field(1, sim::kMaxAccumulation);
  }
  if (auto a = node.optional("allreduce")) {
    if (p.strategy != Strategy::kAllreduce)
      a->fail("only points with strategy \"allreduce\" give it");
    p.allreduce = parse_exchange(*a);
  }
  p.gpus = positive_int(node.required("gpus"));
  const ConfigNode nodes = node.required("nodes");
  p.nodes = positive_int(nodes);
  p.nodes_line = nodes.line();
  p.nodes_column = nodes.column();
  p.nodes_key = nodes.path();
  if (p.gpus % p.nodes != 0) {
    nodes.fail(fmt::format("gpus ({}) must be a whole multiple of nodes ({})", p.gpus, p.nodes));
  }
  if (!parallel && (p.strategy == Strategy::kNone) != (p.gpus == 1)) {
    strategy.fail(
        fmt::format("strategy \"none\" is used exactly when gpus is 1 (gpus is {})", p.gpus));
  }
  const ConfigNode measured = node.required("measured");
  p.measured = parallel ? parse_llm_measured(measured) : parse_measured(measured);
  p.measured_at = KeyAt::of(measured.required(to_string(p.measured.kind)));
  if (p.measured.baseline_gpus) {
    // FORMAT.md section 5.4: B is this point reduced to baseline_gpus GPUs with the same GPUs per
    // node. A larger baseline (64 for an 8-GPU point) was simulated and scored, and 3 GPUs of
    // 4-GPU nodes was simulated as one node of 3.
    const ConfigNode b = measured.required("baseline_gpus");
    const int base = *p.measured.baseline_gpus;
    if (base >= p.gpus)
      b.fail(fmt::format(
          "expected fewer GPUs than the point's gpus ({}): the baseline is the point reduced to "
          "fewer GPUs, got {}",
          p.gpus, base));
    if (base != 1 && base % p.gpus_per_node() != 0)
      b.fail(fmt::format(
          "expected 1 or a whole multiple of the point's {} GPUs per node (gpus {} / nodes {}): "
          "the baseline keeps the GPUs per node, got {}",
          p.gpus_per_node(), p.gpus, p.nodes, base));
  }
  if (parallel) parse_parallel_of(node, p);
  const ConfigNode role = node.required("role");
  p.role = one_of(role, {"anchor", "predict"}) == "anchor" ? Role::kAnchor : Role::kPredict;
  if (p.role == Role::kPredict) {
    if (!node.has("anchor")) role.fail("a predict point needs an 'anchor' key");
    p.anchor = non_empty_string(node.required("anchor"));
  } else if (node.has("anchor")) {
    node.required("anchor").fail("only predict points name an anchor");
  }
  if (!parallel && p.role == Role::kAnchor && p.measured.kind != MeasuredKind::kThroughput) {
    node.required("measured").fail("an anchor must give a throughput");
  }
  p.source = non_empty_string(node.required("source"));
  if (auto n = node.optional("notes")) p.notes = n->as_string();
  return p;
}

// context and io_observations: lists of mappings, each with a unique id.
int check_free_list(const ConfigNode& list) {
  if (!list.is_sequence()) list.fail("expected a list of mappings");
  std::set<std::string> ids;
  int count = 0;
  for (const ConfigNode& item : list.items()) {
    if (!item.is_map()) item.fail("expected a mapping with an 'id'");
    const ConfigNode id = item.required("id");
    if (!ids.insert(non_empty_string(id)).second) {
      id.fail(fmt::format("duplicate id \"{}\"", id.as_string()));
    }
    ++count;
  }
  return count;
}

ValidationFile parse(const ConfigNode& root, const std::string& name) {
  if (!root.is_map()) root.fail("expected a validation file (a map with schema and points)");
  root.check_keys({"schema", "points", "context", "io_observations"});
  const ConfigNode schema = root.required("schema");
  if (schema.as_string() != kSchema) {
    schema.fail(fmt::format("expected \"{}\", got \"{}\"", kSchema, schema.as_string()));
  }
  ValidationFile file;
  file.path = name;
  const ConfigNode points = root.required("points");
  if (!points.is_sequence()) points.fail("expected a list of points");
  std::map<std::string, int> line_of_id;
  const std::vector<ConfigNode> items = points.items();
  for (const ConfigNode& item : items) {
    ValidationPoint p = parse_point(item);
    if (!line_of_id.emplace(p.id, p.line).second) {
      item.required("id").fail(
          fmt::format("duplicate id \"{}\" (first at line {})", p.id, line_of_id.at(p.id)));
    }
    file.points.push_back(std::move(p));
  }
  // Anchors are resolved after all points are read: an anchor may follow its predict points.
  for (std::size_t i = 0; i < file.points.size(); ++i) {
    const ValidationPoint& p = file.points[i];
    if (p.role != Role::kPredict) continue;
    const ConfigNode at = items[i].required("anchor");
    const ValidationPoint* a = file.find(p.anchor);
    if (a == nullptr) at.fail(fmt::format("no point with id \"{}\" in this file", p.anchor));
    if (a->role != Role::kAnchor) at.fail(fmt::format("point \"{}\" is not an anchor", p.anchor));
    if (a->anchor_key() != p.anchor_key()) {
      at.fail(fmt::format("anchor \"{}\" has key ({}), this point has ({})", p.anchor,
                          a->anchor_key(), p.anchor_key()));
    }
  }
  if (auto c = root.optional("context")) file.context_count = check_free_list(*c);
  if (auto o = root.optional("io_observations")) file.io_observation_count = check_free_list(*o);
  return file;
}

}  // namespace

KeyAt KeyAt::of(const ConfigNode& node) {
  return KeyAt{node.file(), node.line(), node.column(), node.path()};
}

std::string KeyAt::reason(const std::string& message) const {
  std::string where = file;
  if (line > 0) where += fmt::format(":{}", line);
  if (line > 0 && column > 0) where += fmt::format(":{}", column);
  return fmt::format("{}: {}: {}", where, key, message);
}

std::string_view to_string(Strategy s) {
  switch (s) {
    case Strategy::kNone:
      return "none";
    case Strategy::kAllreduce:
      return "allreduce";
    case Strategy::kParameterServer:
      return "parameter_server";
    case Strategy::kParameterServerCpu:
      return "parameter_server_cpu";
    case Strategy::kParallel:
      return "parallel";
  }
  return "?";
}

std::string_view to_string(MeasuredKind k) {
  switch (k) {
    case MeasuredKind::kThroughput:
      return "throughput";
    case MeasuredKind::kScalingEfficiency:
      return "scaling_efficiency";
    case MeasuredKind::kTokensPerSecondPerGpu:
      return "tokens_per_s_per_gpu";
    case MeasuredKind::kIterationSeconds:
      return "iteration_s";
    case MeasuredKind::kMfu:
      return "mfu";
    case MeasuredKind::kHfu:
      return "hfu";
    case MeasuredKind::kTflopsPerGpu:
      return "tflops_per_gpu";
  }
  return "?";
}

std::string ValidationPoint::anchor_key() const {
  if (strategy == Strategy::kParallel) return fmt::format("{}, family {}", system, family);
  return fmt::format("{}, {}, {}, {}, {}", system, model,
                     seq_len ? std::to_string(*seq_len) : std::string("-"), precision, framework);
}

const ValidationPoint* ValidationFile::find(const std::string& id) const {
  for (const ValidationPoint& p : points) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

ValidationFile load_validation_file(const std::string& path) {
  return parse(ConfigNode::load_file(path), path);
}

ValidationFile parse_validation_text(const std::string& text, const std::string& name) {
  return parse(ConfigNode::load_string(text, name), name);
}

}  // namespace scalecast::validation
