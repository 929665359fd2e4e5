#include "sim/scenario.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "models/zoo.hpp"
#include "platforms/platform.hpp"

namespace scalecast::sim {

using common::ConfigError;
using common::ConfigNode;
using common::Quantity;

std::vector<std::pair<std::string, std::string>> parse_overrides(
    const std::vector<std::string>& sets) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("--set", 0, 0, s, "expected key.path=value");
    out.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return out;
}

namespace {

void apply_override(YAML::Node root, const std::string& key, const std::string& value) {
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::Exception&) {
    parsed = YAML::Node(value);
  }
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1)
    parts.push_back(key.substr(start, dot - start));
  parts.push_back(key.substr(start));
  // yaml-cpp nodes are handles: walk by reset() so assignment edits the tree, not a copy.
  YAML::Node cur = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!cur[parts[i]] || !cur[parts[i]].IsMap()) cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
    YAML::Node next = cur[parts[i]];
    cur.reset(next);
  }
  cur[parts.back()] = parsed;
}

int positive_int(const ConfigNode& n) {
  const std::int64_t v = n.as_int();
  if (v < 1 || v > 1'000'000) n.fail("expected a positive whole number, got " + n.as_string());
  return static_cast<int>(v);
}

template <class T, class F>
T enum_value(const ConfigNode& n, F parse, const char* allowed) {
  const auto v = parse(n.as_string());
  if (!v) n.fail(std::string("expected one of ") + allowed + ", got \"" + n.as_string() + "\"");
  return *v;
}

// Loads the platform or model a scenario key names. When it cannot be found at all (a ConfigError
// with no line of its own, or the zoo's std::invalid_argument for an unknown name) the error is
// the key's, at the key's place; errors inside an existing file keep that file's location.
template <class F>
auto load_named_by(const ConfigNode& key, F&& load) {
  try {
    return load();
  } catch (const ConfigError& e) {
    if (e.line() > 0) throw;
    key.fail(e.message());
  } catch (const std::invalid_argument& e) {
    key.fail(e.what());
  }
}

// seq_len: tokens per sequence, only for a model whose input is token ids, and no longer than
// the model allows (BERT's 512-row position table); the model is loaded to check both.
std::int64_t load_seq_len(const ConfigNode& n, const ConfigNode& model_key) {
  const std::int64_t v = n.as_int();
  if (v < 1) n.fail("expected a positive whole number of tokens, got " + n.as_string());
  const models::Model model =
      load_named_by(model_key, [&] { return models::load_model(model_key.as_string()); });
  if (!model.input.tokens) {
    n.fail("expected only for a model whose input is token sequences; " + model.name +
           " takes images");
  }
  try {
    models::infer_shapes(model, v);
  } catch (const ConfigError& e) {
    n.fail(fmt::format("{} cannot take sequence length {}: {}", model.name, v, e.message()));
  }
  return v;
}

void load_allreduce(const ConfigNode& a, AllReduceConfig& c) {
  a.check_keys({"library", "algorithm", "inter_node", "fusion_buffer", "cycle_time", "chunks"});
  if (auto v = a.optional("library"))
    c.library = enum_value<Library>(*v, parse_library, "nccl, mpi");
  if (auto v = a.optional("algorithm"))
    c.algorithm = enum_value<Algorithm>(*v, parse_algorithm, "ring, tree, hierarchical, auto");
  if (auto v = a.optional("inter_node")) {
    c.inter_node = enum_value<Algorithm>(*v, parse_algorithm, "ring, tree");
    if (c.inter_node != Algorithm::kRing && c.inter_node != Algorithm::kTree)
      v->fail("expected ring or tree, got \"" + v->as_string() + "\"");
  }
  c.fusion_bytes = a.quantity_or("fusion_buffer", Quantity::kSize, c.fusion_bytes);
  c.cycle_time_s = a.quantity_or("cycle_time", Quantity::kTime, c.cycle_time_s);
  if (auto v = a.optional("chunks")) c.chunks = positive_int(*v);
}

double positive_size(const ConfigNode& n) {
  const double v = n.as_quantity(Quantity::kSize);
  if (!(v > 0.0)) n.fail("expected a positive size like \"110KB\", got " + n.as_string());
  return v;
}

double positive_number(const ConfigNode& n, const char* what) {
  const double v = n.as_double();
  if (!(v > 0.0))
    n.fail(std::string("expected a positive number (") + what + "), got " + n.as_string());
  return v;
}

// input: where batches come from and how they are prepared (sim/input_pipeline.hpp). A storage
// source must exist on the platform, which is loaded to check it.
void load_input(const ConfigNode& in, const ConfigNode& platform_key, Scenario& s) {
  in.check_keys({"sample_size", "prefetch", "source", "stored_sample_size", "decode_rate",
                 "decode_cores", "prefetch_depth"});
  s.input_sample_bytes = in.quantity_or("sample_size", Quantity::kSize, 0.0);
  s.prefetch = in.bool_or("prefetch", true);
  InputPipelineSpec& p = s.input;
  if (auto v = in.optional("source")) {
    p.source = enum_value<InputSource>(*v, parse_input_source, "memory, nvme, pfs");
    if (p.source != InputSource::kMemory) {
      const platforms::Platform machine =
          load_named_by(platform_key, [&] { return platforms::load_platform(s.platform); });
      bool nvme = false;
      for (const platforms::NodeType& t : machine.node_types) nvme = nvme || t.nvme.present;
      if (p.source == InputSource::kPfs && !machine.pfs.present)
        v->fail("platform " + machine.name +
                " has no parallel file system (storage.pfs); expected memory or nvme");
      if (p.source == InputSource::kNvme && !nvme)
        v->fail("platform " + machine.name +
                " has no node-local NVMe (node_types.*.nvme); expected memory or pfs");
    }
  }
  if (auto v = in.optional("stored_sample_size")) {
    if (p.source == InputSource::kMemory)
      v->fail("expected only with source nvme or pfs (memory reads nothing from storage)");
    p.stored_bytes_per_sample = positive_size(*v);
  } else if (p.source != InputSource::kMemory) {
    throw ConfigError(in.file(), in.line(), in.column(), in.child_path("stored_sample_size"),
                      "required with source " + std::string(to_string(p.source)) +
                          ": the bytes read from storage per sample, e.g. 110KB");
  }
  if (auto v = in.optional("decode_rate"))
    p.decode_samples_per_s = positive_number(*v, "samples/s per CPU core");
  if (auto v = in.optional("decode_cores")) {
    if (p.decode_samples_per_s <= 0.0) v->fail("expected only together with decode_rate");
    p.decode_cores = positive_number(*v, "CPU cores per GPU");
  }
  if (auto v = in.optional("prefetch_depth")) {
    const std::int64_t d = v->as_count();
    if (d > 1000) v->fail("expected at most 1000 batches, got " + v->as_string());
    if (!s.prefetch && d > 0)
      v->fail("expected 0 (or no prefetch_depth) with prefetch: false, got " + v->as_string());
    p.prefetch_depth = static_cast<int>(d);
  }
  if (!s.prefetch) p.prefetch_depth = 0;
  s.prefetch = p.prefetch_depth > 0;
}

Scenario load(const ConfigNode& root, const std::string& source) {
  if (!root.is_map()) root.fail("expected a map of scenario settings");
  root.check_keys(
      {"name",          "platform",   "model",           "seq_len",     "precision",
       "batch_per_gpu", "nodes",      "gpus_per_node",   "placement",   "strategy",
       "allreduce",     "fidelity",   "flow_limit_gpus", "iterations",  "warmup",
       "seed",          "network",    "input",           "calibration", "framework_efficiency",
       "trace",         "variability"});
  Scenario s;
  s.source_file = source;
  s.name = root.string_or("name", std::filesystem::path(source).stem().string());
  const ConfigNode platform_key = root.required("platform");
  const ConfigNode model_key = root.required("model");
  s.platform = platform_key.as_string();
  s.model = model_key.as_string();
  if (auto v = root.optional("seq_len")) s.seq_len = load_seq_len(*v, model_key);
  if (auto v = root.optional("precision")) {
    const auto p = common::parse_precision(v->as_string());
    if (!p) v->fail("expected fp32, tf32, fp16 or bf16, got \"" + v->as_string() + "\"");
    s.precision = *p;
  }
  if (auto v = root.optional("batch_per_gpu")) s.batch_per_gpu = positive_int(*v);
  const ConfigNode nodes = root.required("nodes");
  s.nodes.clear();
  if (nodes.is_sequence()) {
    for (const ConfigNode& n : nodes.items()) s.nodes.push_back(positive_int(n));
    if (s.nodes.empty()) nodes.fail("expected at least one node count");
  } else {
    s.nodes.push_back(positive_int(nodes));
  }
  if (auto v = root.optional("gpus_per_node")) s.gpus_per_node = static_cast<int>(v->as_count());
  if (auto v = root.optional("placement")) {
    const std::string p = v->as_string();
    if (p == "packed")
      s.placement = Placement::kPacked;
    else if (p == "spread")
      s.placement = Placement::kSpread;
    else
      v->fail("expected packed or spread, got \"" + p + "\"");
  }
  if (auto v = root.optional("strategy")) {
    s.strategy = v->as_string();
    if (s.strategy != "data_parallel")
      v->fail("expected data_parallel, got \"" + s.strategy + "\"");
  }
  if (auto v = root.optional("allreduce")) load_allreduce(*v, s.allreduce);
  if (auto v = root.optional("fidelity"))
    s.fidelity = enum_value<Fidelity>(*v, parse_fidelity, "flow, wave, auto");
  if (auto v = root.optional("flow_limit_gpus")) s.flow_limit_gpus = positive_int(*v);
  if (auto v = root.optional("iterations")) s.iterations = positive_int(*v);
  if (auto v = root.optional("warmup")) s.warmup = static_cast<int>(v->as_count());
  if (auto v = root.optional("seed")) s.seed = static_cast<std::uint64_t>(v->as_count());
  if (auto v = root.optional("network")) {
    const std::string n = v->as_string();
    if (n == "ideal")
      s.network = NetworkMode::kIdeal;
    else if (n == "calibrated")
      s.network = NetworkMode::kCalibrated;
    else
      v->fail("expected ideal or calibrated, got \"" + n + "\"");
  }
  s.input.decode_cores = 0.0;  // the platform's, unless given
  if (auto in = root.optional("input")) load_input(*in, platform_key, s);
  if (auto v = root.optional("calibration")) s.calibration = v->as_string_list();
  if (auto v = root.optional("framework_efficiency")) {
    // A positive scalar, not capped at 1: validation fits it from anchors, and above 1 means the
    // kernel data is slower than the framework measured.
    // Bounded: op time / efficiency must stay finite and meaningful (4.9e-324 made every op
    // infinitely long and SimGrid abort).
    s.framework_efficiency = v->as_double();
    if (!(s.framework_efficiency >= 1e-3 && s.framework_efficiency <= 1e3))
      v->fail("expected a positive number from 0.001 to 1000, got " + v->as_string());
  }
  if (auto v = root.optional("variability")) {
    v->check_keys({"compute_noise", "stragglers", "straggler_slowdown"});
    s.compute_noise_cv = v->quantity_or("compute_noise", Quantity::kFraction, 0.0);
    s.straggler_fraction = v->quantity_or("stragglers", Quantity::kFraction, 0.0);
    if (auto sl = v->optional("straggler_slowdown")) {
      s.straggler_slowdown = sl->as_double();
      if (s.straggler_slowdown < 1.0) sl->fail("expected a factor of at least 1, e.g. 1.5");
    }
  }
  if (auto t = root.optional("trace")) {
    t->check_keys({"nodes", "node_list"});
    s.trace_nodes = static_cast<int>(t->count_or("nodes", s.trace_nodes));
    if (auto l = t->optional("node_list"))
      for (const ConfigNode& n : l->items())
        s.trace_node_list.push_back(static_cast<int>(n.as_count()));
  }
  YAML::Emitter out;
  out << root.raw();
  s.resolved_yaml = std::string(out.c_str()) + "\n";
  return s;
}

Scenario load_with(ConfigNode root, const std::string& source,
                   const std::vector<std::pair<std::string, std::string>>& overrides) {
  for (const auto& [k, v] : overrides) apply_override(root.raw(), k, v);
  return load(root, source);
}

}  // namespace

Scenario load_scenario(const std::string& path,
                       const std::vector<std::pair<std::string, std::string>>& overrides) {
  return load_with(ConfigNode::load_file(path), path, overrides);
}

Scenario load_scenario_text(const std::string& text, const std::string& name,
                            const std::vector<std::pair<std::string, std::string>>& overrides) {
  return load_with(ConfigNode::load_string(text, name), name, overrides);
}

std::int64_t effective_seq_len(const Scenario& s) {
  const models::Model model = models::load_model(s.model);
  if (!model.input.tokens) return 0;
  return s.seq_len > 0 ? s.seq_len : model.input.seq_len;
}

std::vector<int> trace_nodes_for(const Scenario& s, int nodes) {
  std::vector<int> out;
  if (!s.trace_node_list.empty()) {
    for (int n : s.trace_node_list)
      if (n < nodes) out.push_back(n);
  } else {
    // An even sample: first, last and evenly spaced between.
    const int k = std::min(std::max(1, s.trace_nodes), nodes);
    for (int i = 0; i < k; ++i)
      out.push_back(k == 1 ? 0 : static_cast<int>((static_cast<long>(nodes - 1) * i) / (k - 1)));
  }
  if (out.empty() || out.front() != 0) out.insert(out.begin(), 0);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace scalecast::sim
