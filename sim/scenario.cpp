#include "sim/scenario.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "models/zoo.hpp"
#include "platforms/cluster_size.hpp"
#include "platforms/data_dir.hpp"
#include "platforms/platform.hpp"
#include "sim/cluster.hpp"
#include "sim/framework_preset.hpp"
#include "sim/multi_job_scenario.hpp"
#include "sim/scenario_allreduce.hpp"
#include "sim/scenario_keys.hpp"
#include "sim/scenario_model.hpp"
#include "sim/scenario_strategy.hpp"
#include "sim/time_to_train.hpp"

namespace scalecast::sim {

using common::ConfigError;
using common::ConfigNode;
using common::Quantity;

std::vector<std::pair<std::string, std::string>> parse_overrides(
    const std::vector<std::string>& sets) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& s : sets) {
    const auto eq = s.find('=');
    const std::string key = eq == std::string::npos ? s : s.substr(0, eq);
    bool parts_ok = !key.empty();
    for (std::size_t start = 0, dot = 0; parts_ok && dot != std::string::npos; start = dot + 1) {
      dot = key.find('.', start);
      parts_ok = (dot == std::string::npos ? key.size() : dot) > start;
    }
    if (eq == std::string::npos || !parts_ok)
      throw ConfigError("--set " + s, 0, 0, "",
                        "expected key.path=value, e.g. --set allreduce.algorithm=ring");
    out.emplace_back(key, s.substr(eq + 1));
  }
  return out;
}

namespace {

std::string override_name(const std::string& key, const std::string& value) {
  return "--set " + key + "=" + value;
}

// The value is YAML (a number, a list [1, 2], a map {a: 1}); a malformed one ("[1,2") is an
// error naming the override, not a string. A part of the key path that meets a list is an index
// into it (--set jobs.1.nodes=32); missing map keys are created. An index outside the list, or a
// path through a plain value, is an error naming the override: replacing a list or a value by a
// map would make the file's own key look wrong. Returns the key as error paths spell it
// ("jobs[1].nodes").
std::string apply_override(YAML::Node root, const std::string& key, const std::string& value) {
  YAML::Node parsed;
  try {
    parsed = YAML::Load(value);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(override_name(key, value), 0, 0, key,
                      fmt::format("expected a YAML value (a number, a word, a list like [1, 2] "
                                  "or a map like {{a: 1}}): {}",
                                  e.msg));
  }
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1)
    parts.push_back(key.substr(start, dot - start));
  parts.push_back(key.substr(start));
  const auto is_index = [](const std::string& part) {
    return part.find_first_not_of("0123456789") == std::string::npos;
  };
  std::string path;  // the parts walked so far, as error paths spell them
  const auto fail = [&](const std::string& message) {
    throw ConfigError(override_name(key, value), 0, 0, path.empty() ? key : path, message);
  };
  // yaml-cpp nodes are handles: walk by reset() so assignment edits the tree, not a copy.
  YAML::Node cur = root;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    if (cur.IsSequence()) {
      const std::size_t n = cur.size();
      std::size_t index = n;
      if (is_index(part) && part.size() <= 9) index = static_cast<std::size_t>(std::stoul(part));
      if (index >= n)
        fail(n == 0
                 ? fmt::format("is an empty list: there is no item \"{}\" in it", part)
                 : fmt::format("is a list of {} item{}: expected an index from 0 to {}, got \"{}\"",
                               n, n == 1 ? "" : "s", n - 1, part));
      path += fmt::format("[{}]", index);
      if (last) {
        cur[index] = parsed;
        break;
      }
      YAML::Node next = cur[index];
      cur.reset(next);
      continue;
    }
    if (!cur.IsMap() && !cur.IsNull())
      fail(fmt::format("is a value ({}), not a map or a list: there is no \"{}\" inside it",
                       cur.IsScalar() ? cur.Scalar() : std::string("?"), part));
    path += path.empty() ? part : "." + part;
    if (last) {
      cur[part] = parsed;
      break;
    }
    if (!cur[part]) {
      // A number next would index a list that is not there; a map keyed "0" would make the
      // loader blame a key the file does not have.
      if (is_index(parts[i + 1]))
        fail(fmt::format("is not in the scenario: there is no list to take item \"{}\" of",
                         parts[i + 1]));
      cur[part] = YAML::Node(YAML::NodeType::Map);
    }
    YAML::Node next = cur[part];
    cur.reset(next);
  }
  return path;
}

// Physical limits of the scenario's quantities, so that products (batch x sample size, bytes per
// flow) stay far inside double and SimGrid's 64-bit byte counts and results are right or an error.
constexpr double kMaxSampleBytes = 8.0 * 1073741824.0;  // 8 GiB (a 3-D volume is ~1 GB)
constexpr double kMaxDecodeRate = 1e9;                  // samples/s per core
constexpr double kMaxDecodeCores = 1e6;
// The slowest decode a scenario may state: below these a batch's decode time leaves double's range
// (a denormal rate made SimGrid abort on an infinite sleep) or dwarfs any training run.
constexpr double kMinDecodeRate = 1e-3;   // samples/s per core
constexpr double kMinDecodeCores = 1e-3;  // a thousandth of a core per GPU
constexpr double kMaxFixedCost_s = 1.0;   // a host cost per op or per step; seconds would be absurd
// A run keeps every simulated iteration's records (trace and ops.csv): 1,000 iterations of one
// 6-GPU Summit node take 34 s and 0.7 GB here, so a million (the old limit) ran out of memory.
constexpr int kMaxIterations = 1000;
constexpr int kMaxWarmup = 100;

// gpus_per_node: 0 (every GPU of the node) up to the GPUs of the platform's smallest node type
// (the job may be placed on any of them); more is an error, not a silent clamp.
int load_gpus_per_node(const ConfigNode& n, const platforms::Platform& machine) {
  const int v = n.as_int_field(0, kMaxCount);
  if (v == 0) return v;
  for (const platforms::NodeType& t : machine.node_types) {
    if (v > t.gpu_count)
      n.fail(fmt::format("expected at most {}: a {} node ({}) has {} GPU{}, got {}", t.gpu_count,
                         machine.name, t.name, t.gpu_count, t.gpu_count == 1 ? "" : "s", v));
  }
  return v;
}

// A node count: 1 to platforms::kMaxClusterNodes.
int node_count(const ConfigNode& n) {
  return n.as_int_field(1, static_cast<int>(platforms::kMaxClusterNodes));
}

KeyLocation where(const ConfigNode& n) { return {n.file(), n.line(), n.column(), n.path()}; }

void load_cluster(const ConfigNode& c, Scenario& s) {
  if (!c.is_map()) c.fail("expected a map with nodes and/or partition");
  c.check_keys({"nodes", "partition"});
  if (auto v = c.optional("nodes")) {
    s.cluster_nodes_at = where(*v);
    if (!(v->is_scalar() && v->as_string() == "fit")) {
      if (v->is_scalar() && std::isalpha(static_cast<unsigned char>(v->as_string()[0])))  // FIT
        v->fail(fmt::format("expected a node count (1 to {}) or fit, got \"{}\"",
                            common::format_count(platforms::kMaxClusterNodes), v->as_string()));
      s.cluster_nodes = node_count(*v);
    }
  }
  if (auto v = c.optional("partition")) {
    s.cluster_partition = v->as_string();
    s.cluster_partition_at = where(*v);
  }
}

// fixed_costs: host costs per op and per iteration (calibration/fixed_costs.hpp).
void load_fixed_costs(const ConfigNode& f, calibration::FixedCostParams& p) {
  f.check_keys({"dispatch_per_op", "per_iteration"});
  const auto time = [&](const char* key, double& out) {
    if (auto v = f.optional(key)) {
      out = v->as_quantity_in(Quantity::kTime, 0.0, kMaxFixedCost_s);
    }
  };
  time("dispatch_per_op", p.dispatch_per_op_s);
  time("per_iteration", p.per_iteration_s);
}

// A sample has at least one byte; a fraction of one is a typo, not a size.
// Bytes per sample: whole bytes (1.5B reached summary.json as 1.5 bytes).
double sample_size(const ConfigNode& n) {
  const double v = n.as_quantity_in(Quantity::kSize, 1.0, kMaxSampleBytes);
  if (v != std::floor(v))
    n.fail(
        fmt::format("expected a whole number of bytes, got \"{}\" ({:g} bytes)", n.as_string(), v));
  return v;
}

double number_in(const ConfigNode& n, const char* what, double min, double max) {
  const double v = n.as_double();
  if (!(v >= min) || !(v <= max))
    n.fail(fmt::format("expected a number ({}) from {:g} to {:g}, got {}", what, min, max,
                       n.as_string()));
  return v;
}

// input: where batches come from and how they are prepared (sim/input_pipeline.hpp). A storage
// source must exist on the platform, which is loaded to check it.
void load_input(const ConfigNode& in, const platforms::Platform& machine, Scenario& s) {
  in.check_keys({"sample_size", "prefetch", "source", "stored_sample_size", "decode_rate",
                 "decode_cores", "prefetch_depth"});
  if (auto v = in.optional("sample_size")) s.input_sample_bytes = sample_size(*v);
  s.prefetch = in.bool_or("prefetch", true);
  InputPipelineSpec& p = s.input;
  if (auto v = in.optional("source")) {
    p.source = enum_value<InputSource>(*v, parse_input_source, "memory, nvme, pfs");
    if (p.source != InputSource::kMemory) {
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
    p.stored_bytes_per_sample = sample_size(*v);
  } else if (p.source != InputSource::kMemory) {
    throw ConfigError(in.file(), in.line(), in.column(), in.child_path("stored_sample_size"),
                      "required with source " + std::string(to_string(p.source)) +
                          ": the bytes read from storage per sample, e.g. 110KB");
  }
  if (auto v = in.optional("decode_rate"))
    p.decode_samples_per_s =
        number_in(*v, "samples/s per CPU core", kMinDecodeRate, kMaxDecodeRate);
  if (auto v = in.optional("decode_cores")) {
    if (p.decode_samples_per_s <= 0.0) v->fail("expected only together with decode_rate");
    p.decode_cores = number_in(*v, "CPU cores per GPU", kMinDecodeCores, kMaxDecodeCores);
  }
  if (auto v = in.optional("prefetch_depth")) {
    const int d = v->as_int_field(0, 1000);
    if (!s.prefetch && d > 0)
      v->fail("expected 0 (or no prefetch_depth) with prefetch: false, got " + v->as_string());
    p.prefetch_depth = d;
  }
  if (!s.prefetch) p.prefetch_depth = 0;
  s.prefetch = p.prefetch_depth > 0;
}

}  // namespace

Scenario load_scenario_node(const ConfigNode& root, const std::string& source) {
  if (!root.is_map()) root.fail("expected a map of scenario settings");
  // clang-format off
  root.check_keys(
      {"name",          "platform",    "model",           "seq_len",     "precision",
       "batch_per_gpu", "nodes",       "gpus_per_node",   "placement",   "strategy",
       "allreduce",     "fidelity",    "flow_limit_gpus", "iterations",  "warmup",
       "seed",          "network",     "input",           "calibration", "framework_efficiency",
       "trace",         "variability", "cluster",         "framework",   "fixed_costs",
       "memory_check",
       "time_to_train", "parameter_server", "parallel", "stage_gpus", "accumulation",
       "attention"});
  // clang-format on
  Scenario s;
  s.source_file = source;
  s.name = root.string_or("name", std::filesystem::path(source).stem().string());
  const ConfigNode platform_key = root.required("platform");
  const ConfigNode model_key = root.required("model");
  // A platform, model or database named by a path is found from the working directory, next to
  // the scenario file or in the data dirs (platforms/data_dir.hpp), so a scenario runs from any
  // directory; bare names are the data dirs' and the zoo's.
  const auto reference = [&](const std::string& ref) {
    return platforms::looks_like_path(ref) ? platforms::resolve_reference(ref, source) : ref;
  };
  s.platform = reference(platform_key.as_string());
  // The platform is loaded once, here: the checks below read it, and a platform that cannot be
  // loaded is an error at the key that names it (its own errors keep their own file:line).
  const platforms::Platform machine =
      load_named_by(platform_key, [&] { return platforms::load_platform(s.platform); });
  s.model = reference(model_key.as_string());
  // An LLM scenario (`parallel:`) takes batch, precision and sequence length from parallel.
  const bool llm = root.has("parallel");
  check_job_kind_keys(root, llm);
  if (auto v = root.optional("seq_len")) s.seq_len = load_seq_len(*v, model_key, s.model);
  if (auto v = root.optional("attention"))
    s.fused_attention = load_attention(*v, model_key, s.model);
  if (auto v = root.optional("precision")) {
    const auto p = common::parse_precision(v->as_string());
    if (!p) v->fail("expected fp32, tf32, fp16 or bf16, got \"" + v->as_string() + "\"");
    s.precision = *p;
  }
  if (auto v = root.optional("batch_per_gpu")) s.batch_per_gpu = positive_int(*v);
  if (auto v = root.optional("accumulation")) s.accumulation = v->as_int_field(1, kMaxAccumulation);
  const ConfigNode nodes = root.required("nodes");
  s.nodes.clear();
  if (nodes.is_sequence()) {
    for (const ConfigNode& n : nodes.items()) {
      const int count = node_count(n);
      // Each point writes nodes-N/: a repeated count ran twice into one folder.
      const auto seen = std::find(s.nodes.begin(), s.nodes.end(), count);
      if (seen != s.nodes.end())
        n.fail(fmt::format("{} is already listed at nodes[{}]; each node count is one point", count,
                           seen - s.nodes.begin()));
      s.nodes.push_back(count);
      s.nodes_at.push_back(where(n));
    }
    if (s.nodes.empty()) nodes.fail("expected at least one node count");
  } else {
    s.nodes.push_back(node_count(nodes));
    s.nodes_at.push_back(where(nodes));
  }
  if (auto v = root.optional("cluster")) load_cluster(*v, s);
  if (auto v = root.optional("gpus_per_node")) s.gpus_per_node = load_gpus_per_node(*v, machine);
  if (auto v = root.optional("placement")) {
    s.placement_at = where(*v);
    const std::string p = v->as_string();
    if (p == "packed")
      s.placement = Placement::kPacked;
    else if (p == "spread")
      s.placement = Placement::kSpread;
    else
      v->fail("expected packed or spread, got \"" + p + "\"");
  }
  if (auto v = root.optional("framework")) {
    s.framework = enum_value<calibration::Framework>(*v, calibration::parse_framework,
                                                     "pytorch, tensorflow, mxnet, none");
    s.allreduce = framework_bucketing(s.framework, s.allreduce);
    s.fixed_costs = calibration::default_fixed_costs(s.framework);
  }
  if (auto v = root.optional("allreduce")) {
    load_allreduce(*v, s.allreduce);
    check_collective_choice(*v, s, machine);
  }
  load_strategy(root, s, machine);  // strategy, parameter_server, allreduce transport checks
  if (auto v = root.optional("fixed_costs")) load_fixed_costs(*v, s.fixed_costs);
  if (auto v = root.optional("fidelity"))
    s.fidelity = enum_value<Fidelity>(*v, parse_fidelity, "flow, wave, auto");
  if (auto v = root.optional("flow_limit_gpus")) s.flow_limit_gpus = positive_int(*v);
  if (auto v = root.optional("iterations")) s.iterations = v->as_int_field(1, kMaxIterations);
  if (auto v = root.optional("warmup")) s.warmup = v->as_int_field(0, kMaxWarmup);
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
  if (auto in = root.optional("input")) load_input(*in, machine, s);
  if (auto v = root.optional("calibration")) {
    s.calibration = v->as_string_list();
    for (std::string& db : s.calibration) db = reference(db);
  }
  if (auto v = root.optional("framework_efficiency")) {
    // A positive scalar, not capped at 1: validation fits it from anchors, and above 1 means the
    // kernel data is slower than the framework measured.
    // Bounded: op time / efficiency must stay finite and meaningful (4.9e-324 made every op
    // infinitely long and SimGrid abort).
    s.framework_efficiency = v->as_double();
    if (!(s.framework_efficiency >= 1e-3 && s.framework_efficiency <= 100.0))
      v->fail("expected a positive number from 0.001 to 100 (a time divisor), got " +
              v->as_string());
  }
  if (auto v = root.optional("variability")) {
    v->check_keys({"compute_noise", "stragglers", "straggler_slowdown"});
    s.compute_noise_cv = v->quantity_or("compute_noise", Quantity::kFraction, 0.0);
    s.straggler_fraction = v->quantity_or("stragglers", Quantity::kFraction, 0.0);
    if (auto sl = v->optional("straggler_slowdown")) {
      s.straggler_slowdown = sl->as_double();
      if (!(s.straggler_slowdown >= 1.0 && s.straggler_slowdown <= 1000.0))
        sl->fail("expected a factor from 1 to 1000, e.g. 1.5, got " + sl->as_string());
    }
  }
  if (auto t = root.optional("trace")) {
    t->check_keys({"nodes", "node_list"});
    s.trace_nodes = t->int_field_or("nodes", 1, kMaxCount, s.trace_nodes);
    // Job-local indices; one no point of the scenario has is an error (smaller points keep
    // the indices they have).
    const int largest = *std::max_element(s.nodes.begin(), s.nodes.end());
    if (auto l = t->optional("node_list")) {
      for (const ConfigNode& n : l->items()) {
        const int i = n.as_int_field(0, kMaxCount - 1);
        if (i >= largest)
          n.fail(
              fmt::format("node index {} does not exist: the largest point has {} node{} "
                          "(indices 0 to {})",
                          i, largest, largest == 1 ? "" : "s", largest - 1));
        const auto seen = std::find(s.trace_node_list.begin(), s.trace_node_list.end(), i);
        if (seen != s.trace_node_list.end())
          n.fail(fmt::format("node index {} is already listed at node_list[{}]", i,
                             seen - s.trace_node_list.begin()));
        s.trace_node_list.push_back(i);
      }
    }
  }
  // memory_check: false is for replaying measured runs (validation), which ran and so fit,
  // whatever the estimate says of the precision they are simulated at.
  s.memory_check = root.bool_or("memory_check", true);
  if (llm) {
    s.llm =
        load_llm_for_nodes(root, s.model, s.nodes, s.gpus_per_node, machine, s.memory_check, nodes);
    // On the machine the point runs on (a node count it cannot have is check_node_counts').
    if (auto sized = sized_platform_if_any(s, machine, s.nodes.front()))
      check_stage_placement(root, *s.llm, *sized, s.gpus_per_node);
  } else if (s.memory_check) {
    check_memory(root, s, machine);
  }
  if (auto v = root.optional("time_to_train")) load_time_to_train(*v, s, machine);
  YAML::Emitter out;
  out << root.raw();
  s.resolved_yaml = std::string(out.c_str()) + "\n";
  return s;
}

namespace {

// An error in a value an override set names the override ("--set warmup=abc: error: warmup:
// ..."), not the scenario file's line the key happens to sit at; so does one at a key the
// override created on its way (--set a.b.c=1: "a: unknown key" at the root's place).
bool under(const std::string& path, const std::string& key) {
  return path == key || (path.size() > key.size() && path.compare(0, key.size(), key) == 0 &&
                         (path[key.size()] == '.' || path[key.size()] == '['));
}

// Keys an override set keep the override's place for errors found after loading (a node count
// the machine cannot hold, checked by the parent): the value's YAML marks are positions inside
// the override's text, not lines of the scenario file.
void relocate_overridden(Scenario& s,
                         const std::vector<std::pair<std::string, std::string>>& overrides,
                         const std::vector<std::string>& paths) {
  if (overrides.empty()) return;
  const auto fix = [&](KeyLocation& at) {
    for (std::size_t i = overrides.size(); i-- > 0;) {
      if (!under(at.key, paths[i])) continue;
      at.file = override_name(overrides[i].first, overrides[i].second);
      at.line = at.column = 0;
      return;
    }
  };
  for (KeyLocation& at : s.nodes_at) fix(at);
  fix(s.cluster_nodes_at);
  fix(s.cluster_partition_at);
  fix(s.placement_at);
  fix(s.time_to_train.at);
  if (s.multi) {
    auto multi = std::make_shared<MultiJobSpec>(*s.multi);
    fix(multi->at);
    for (MixJob& job : multi->jobs) {
      fix(job.at);
      relocate_overridden(job.scenario, overrides, paths);
    }
    s.multi = std::move(multi);
  }
}

// The error's key is one no file gave: an override made it on its way (its node has no mark).
bool created(const ConfigNode& root, const ConfigError& e) {
  YAML::Node cur = root.raw();
  std::string part;
  for (const char c : e.key_path() + ".") {
    if (c != '.' && c != '[' && c != ']') part += c;
    if ((c != '.' && c != '[') || part.empty()) continue;
    if (cur.IsSequence() && part.find_first_not_of("0123456789") != std::string::npos) return false;
    const YAML::Node at = cur, next = cur.IsSequence() ? at[std::stoul(part)] : at[part];
    cur.reset(next);
    part.clear();
  }
  return !e.key_path().empty() && cur.IsDefined() && cur.Mark().is_null();
}

Scenario load_with(ConfigNode root, const std::string& source,
                   const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> paths;  // each override's key as error paths spell it
  for (const auto& [k, v] : overrides) paths.push_back(apply_override(root.raw(), k, v));
  try {
    Scenario s = root.is_map() && root.has("jobs") ? load_multi_job(root, source)
                                                   : load_scenario_node(root, source);
    relocate_overridden(s, overrides, paths);
    return s;
  } catch (const ConfigError& e) {
    if (e.file() != root.file()) throw;  // from a platform or model file
    for (std::size_t i = overrides.size(); i-- > 0;) {
      if (under(e.key_path(), paths[i]) || (under(paths[i], e.key_path()) && created(root, e)))
        throw ConfigError(override_name(overrides[i].first, overrides[i].second), 0, 0,
                          e.key_path(), e.message());
    }
    throw;
  }
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
  if (s.llm) return s.llm->seq_len();
  const models::Model model = models::load_model(s.model);
  if (!model.input.tokens) return 0;
  return s.seq_len > 0 ? s.seq_len : model.input.seq_len;
}

}  // namespace scalecast::sim
