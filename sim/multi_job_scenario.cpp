#include "sim/multi_job_scenario.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "common/rng.hpp"
#include "platforms/cluster_size.hpp"
#include "platforms/platform.hpp"
#include "sim/cluster.hpp"
#include "sim/engine_setup.hpp"
#include "sim/platform_builder.hpp"
#include "sim/scenario_runner.hpp"

namespace scalecast::sim {

using common::ConfigError;
using common::ConfigNode;
using common::Quantity;

const char* to_string(MixPlacement p) {
  switch (p) {
    case MixPlacement::kPacked:
      return "packed";
    case MixPlacement::kSpread:
      return "spread";
    case MixPlacement::kRandom:
      return "random";
  }
  return "?";
}

std::vector<int> MultiJobSpec::training() const {
  std::vector<int> out;
  for (std::size_t k = 0; k < jobs.size(); ++k)
    if (jobs[k].kind == MixJob::Kind::kTraining) out.push_back(static_cast<int>(k));
  return out;
}

namespace {

constexpr int kMaxCount = 1'000'000;
constexpr double kMaxStart_s = 1e6;  // 11.6 days of simulated time
constexpr double kMaxRequestBytes = 64.0 * 1073741824.0;
constexpr double kMaxReadRate_Bps = 1e15;  // 1 PB/s, above any file system
// At least one byte per second and per request: a reader is paced by request / rate, and a rate
// of 4.9e-324 B/s made the pace infinite, after which the reader read unpaced.
constexpr double kMinReadRate_Bps = 1.0;
constexpr double kMinRequestBytes = 1.0;

// Top-level keys of the single-job form that stay the file's own: the machine and the policy.
const std::set<std::string> kMachineKeys = {"name",      "platform", "cluster", "network",
                                            "placement", "seed",     "jobs"};
// What a training job may set: its model and how it trains (the single-job keys, over the
// file's), plus its size, place and start.
const std::vector<std::string> kTrainingKeys = {
    "name",        "kind",         "model",         "seq_len",
    "attention",   "precision",    "batch_per_gpu", "accumulation",
    "nodes",       "gpus",         "gpus_per_node", "node_list",
    "start",       "strategy",     "allreduce",     "framework",
    "fixed_costs", "input",        "fidelity",      "flow_limit_gpus",
    "iterations",  "warmup",       "calibration",   "framework_efficiency",
    "variability", "memory_check", "trace",         "parallel"};
const std::vector<std::string> kIoKeys = {"name",  "kind",      "nodes",        "node_list",
                                          "start", "read_rate", "request_size", "duration"};
// Job keys that are not single-job scenario keys.
const std::set<std::string> kPlacementKeys = {"name", "kind",      "nodes",
                                              "gpus", "node_list", "start"};

KeyLocation where(const ConfigNode& n) { return {n.file(), n.line(), n.column(), n.path()}; }

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  return std::all_of(n.begin(), n.end(),
                     [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                              c == '.';
                     }) &&
         n != "." && n != "..";
}

// The GPUs of a node when every node type of the machine has the same number; 0 otherwise.
int uniform_node_gpus(const platforms::Platform& machine) {
  int g = 0;
  for (const platforms::Partition& p : machine.partitions) {
    const int c = machine.node_types.at(p.node_type).gpu_count;
    if (g != 0 && c != g) return 0;
    g = c;
  }
  return g;
}

// The training job's own scenario: the file's keys with the job's over them, loaded by the
// single-job loader; its errors name the job's key (jobs[i].key) when the key is the job's.
// `probe`: only the machine is read from the result, before the jobs have sizes; an LLM job is
// then loaded at one GPU (tp, pp and dp 1, no memory check), since its parallel map fixes its size.
Scenario load_training(const ConfigNode& root, const ConfigNode& job, const std::string& source,
                       const std::string& name, int nodes, int gpus_per_node, bool probe = false) {
  YAML::Node merged(YAML::NodeType::Map);
  for (const auto& kv : root.raw()) {
    const std::string key = kv.first.as<std::string>();
    if (!kMachineKeys.count(key) || key == "platform" || key == "cluster" || key == "network" ||
        key == "seed")
      merged[key] = kv.second;
  }
  std::set<std::string> own;
  for (const auto& [key, value] : job.entries()) {
    own.insert(key);
    if (!kPlacementKeys.count(key)) merged[key] = value.raw();
  }
  // `merged` shares its values' nodes with the file's: a key is set by replacing its node, never
  // by assigning to it (that would write into the file's node, which the next job reads).
  const auto set = [&merged](const char* key, const YAML::Node& value) {
    merged.remove(key);
    merged[key] = value;
  };
  set("name", YAML::Node(name));
  set("nodes", YAML::Node(nodes));
  if (gpus_per_node > 0) set("gpus_per_node", YAML::Node(gpus_per_node));
  // The probe runs at one node: trace.node_list is checked at the job's size, not the probe's
  // (node_list: [0, 1] of a 2-node job was "the largest point has 1 node").
  if (probe) merged.remove("trace");
  if (probe && job.has("parallel") && job.required("parallel").is_map()) {
    YAML::Node one(YAML::NodeType::Map);
    for (const char* k : {"tp", "pp", "dp", "micro_batch", "global_batch"}) one[k] = 1;
    if (job.required("parallel").has("seq_len"))
      one["seq_len"] = job.required("parallel").required("seq_len").raw();
    set("parallel", one);
    set("memory_check", YAML::Node(false));
    set("gpus_per_node", YAML::Node(1));
  }
  const ConfigNode node(merged, std::make_shared<const std::string>(root.file()), "", job.line(),
                        job.column());
  try {
    return load_scenario_node(node, source);
  } catch (const ConfigError& e) {
    if (e.file() != root.file()) throw;  // from a platform or model file
    const std::string first = e.key_path().substr(0, e.key_path().find_first_of(".["));
    // Keys this function sets have no place of their own: an error there is at the job's entry.
    // A file key an override gave (no place either) keeps its own path, so the override is named.
    const bool at_entry = e.line() == job.line() && e.column() == job.column() &&
                          (first == "name" || first == "nodes" || first == "gpus_per_node" ||
                           first == "parallel" || first == "memory_check");
    if (own.count(first) || at_entry)
      throw ConfigError(e.file(), e.line(), e.column(), job.path() + "." + e.key_path(),
                        e.message());
    if (job.has("parallel") && e.line() != job.line())
      throw ConfigError(e.file(), e.line(), e.column(), e.key_path(),
                        e.message() + " (the file's keys are defaults of every job, and job '" +
                            name + "' is an LLM job: set this key in its other jobs instead)");
    throw;
  }
}

// A parameter-server job's tasks take nodes of their own beside the job's (or share its nodes),
// which a mix's placement does not do, and a job has no parameter_server block: refused at the
// strategy key (the file's, which every job inherits, or the job's), not as a missing block.
void refuse_parameter_server(const ConfigNode& map) {
  const auto v = map.optional("strategy");
  if (v && v->is_scalar() && v->as_string() == "parameter_server")
    v->fail(
        "expected data_parallel: parameter-server jobs are not available in a jobs list (the mix "
        "does not place their tasks); simulate one as a single-job scenario (no jobs, "
        "strategy: parameter_server and a parameter_server block)");
}

// A job sized by `gpus` runs on one node with gpus_per_node = gpus (up to a node's GPUs) or on
// whole nodes; its own gpus_per_node, when given, must say the same (it was silently replaced).
void check_gpus_per_node(const ConfigNode& job, int gpus, int node_gpus, int per_node) {
  const auto v = job.optional("gpus_per_node");
  if (!v || !v->is_scalar()) return;
  int given = 0;
  try {
    given = v->as_int_field(0, kMaxCount);
  } catch (const ConfigError&) {
    return;  // the single-job loader states what gpus_per_node takes
  }
  if (given == 0) given = node_gpus;  // 0: every GPU of the node
  if (given == per_node) return;
  const std::string how =
      gpus <= node_gpus ? fmt::format("gpus: {} runs on one node with gpus_per_node = gpus", gpus)
                        : fmt::format("gpus: {} runs on {} whole nodes of {} GPUs", gpus,
                                      gpus / node_gpus, node_gpus);
  const std::string instead =
      gpus % given == 0 && gpus / given > 1
          ? fmt::format("; for {} nodes of {} GPU{} give nodes: {} and gpus_per_node: {}",
                        gpus / given, given, given == 1 ? "" : "s", gpus / given, given)
          : "";
  v->fail(fmt::format("expected {} or no gpus_per_node: {}, got {}{}", per_node, how,
                      v->as_string(), instead));
}

// Nodes of the machine still free, in order.
std::vector<int> free_nodes(const std::vector<char>& used) {
  std::vector<int> out;
  for (std::size_t n = 0; n < used.size(); ++n)
    if (!used[n]) out.push_back(static_cast<int>(n));
  return out;
}

std::vector<int> place(MixPlacement policy, const std::vector<int>& free, int n, std::uint64_t seed,
                       int job) {
  std::vector<int> out;
  const auto f = static_cast<long>(free.size());
  if (policy == MixPlacement::kPacked) {
    out.assign(free.begin(), free.begin() + n);
  } else if (policy == MixPlacement::kSpread) {
    // Evenly over the free nodes, as a single job's `spread` is over the machine.
    for (int i = 0; i < n; ++i) out.push_back(free[static_cast<long>(i) * f / n]);
  } else {
    // A partial Fisher-Yates shuffle with the scenario's seed, one stream per job.
    std::vector<int> pool = free;
    common::Rng rng = common::Rng(seed).fork(static_cast<std::uint64_t>(job) + 1);
    for (int i = 0; i < n; ++i) {
      const auto j = i + static_cast<long>(rng.below(static_cast<std::uint64_t>(f - i)));
      std::swap(pool[i], pool[j]);
    }
    out.assign(pool.begin(), pool.begin() + n);
    std::sort(out.begin(), out.end());
  }
  return out;
}

}  // namespace

Scenario load_multi_job(const ConfigNode& root, const std::string& source) {
  if (root.has("nodes"))
    root.required("nodes").fail(
        "expected no top-level nodes with jobs: each job gives its nodes, gpus or node_list");
  root.check_keys(
      {"name",          "platform",     "model",           "seq_len",     "precision",
       "batch_per_gpu", "accumulation", "gpus_per_node",   "placement",   "strategy",
       "allreduce",     "fidelity",     "flow_limit_gpus", "iterations",  "warmup",
       "seed",          "network",      "input",           "calibration", "framework_efficiency",
       "trace",         "variability",  "cluster",         "framework",   "fixed_costs",
       "memory_check",  "jobs",         "attention"});
  refuse_parameter_server(root);
  auto spec = std::make_shared<MultiJobSpec>();
  if (auto v = root.optional("placement")) {
    const std::string p = v->as_string();
    if (p == "packed")
      spec->placement = MixPlacement::kPacked;
    else if (p == "spread")
      spec->placement = MixPlacement::kSpread;
    else if (p == "random")
      spec->placement = MixPlacement::kRandom;
    else
      v->fail("expected packed, spread or random, got \"" + p + "\"");
  }
  if (auto v = root.optional("seed")) spec->seed = static_cast<std::uint64_t>(v->as_count());
  const ConfigNode jobs = root.required("jobs");
  spec->at = where(jobs);
  if (!jobs.is_sequence() || jobs.items().empty())
    jobs.fail("expected a list of jobs, each a map with a model and nodes, gpus or node_list");
  const std::vector<ConfigNode> entries = jobs.items();

  // Names, kinds and keys first.
  std::set<std::string> names;
  int first_training = -1;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const ConfigNode& e = entries[i];
    if (!e.is_map()) e.fail("expected a map (name, model, nodes or gpus, start, ...)");
    MixJob job;
    job.at = where(e);
    job.name = e.string_or("name", "job" + std::to_string(i));
    if (!valid_name(job.name))
      e.required("name").fail(
          "expected a name of letters, digits, '-', '_' or '.' (at most 64), got \"" + job.name +
          "\"");
    if (!names.insert(job.name).second)
      (e.has("name") ? e.required("name") : e)
          .fail("expected a name no other job has; \"" + job.name + "\" is taken");
    if (auto k = e.optional("kind")) {
      const std::string kind = k->as_string();
      if (kind == "io")
        job.kind = MixJob::Kind::kIo;
      else if (kind != "training")
        k->fail("expected training or io, got \"" + kind + "\"");
    }
    if (job.kind == MixJob::Kind::kTraining) refuse_parameter_server(e);
    e.check_keys(job.kind == MixJob::Kind::kIo ? kIoKeys : kTrainingKeys);
    if (auto v = e.optional("start")) {
      job.start_s = v->as_quantity_in(Quantity::kTime, 0.0, kMaxStart_s);
      job.start_at = where(*v);
    }
    if (job.kind == MixJob::Kind::kTraining && first_training < 0)
      first_training = static_cast<int>(i);
    spec->jobs.push_back(std::move(job));
  }
  if (first_training < 0)
    jobs.fail("expected at least one training job (I/O jobs alone have nothing to slow down)");

  // The machine every job shares: the platform file at its size, or cluster.nodes (several jobs
  // never grow it). The first training job's scenario loads the platform and cluster keys.
  const Scenario probe = load_training(root, entries[first_training], source,
                                       spec->jobs[first_training].name, 1, 0, true);
  const platforms::Platform file_platform = platforms::load_platform(probe.platform);
  // At the key that decides, as for one job (check_node_counts): an unknown cluster.partition
  // was ignored unless cluster.nodes resized the machine, and then reported at `cluster`.
  const auto fail_at = [](const KeyLocation& at, const std::string& message) {
    throw ConfigError(at.file, at.line, at.column, at.key, message);
  };
  try {
    platforms::growing_partition(file_platform, probe.cluster_partition);
  } catch (const std::invalid_argument& e) {
    fail_at(probe.cluster_partition_at, e.what());
  }
  platforms::Platform machine;
  try {
    machine = sized_platform(probe, file_platform, 1);
  } catch (const std::invalid_argument& e) {
    if (probe.cluster_nodes > 0) fail_at(probe.cluster_nodes_at, e.what());
    root.required("platform").fail(e.what());
  }
  spec->machine_nodes = machine.total_nodes();
  const int node_gpus = uniform_node_gpus(machine);
  const std::string machine_text = fmt::format(
      "{} has {} node{}", machine.name, spec->machine_nodes, spec->machine_nodes == 1 ? "" : "s");

  // Sizes and explicit node lists.
  std::vector<char> used(static_cast<std::size_t>(spec->machine_nodes), 0);
  std::vector<int> owner(used.size(), -1);
  std::vector<int> gpus_per_node(entries.size(), 0);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const ConfigNode& e = entries[i];
    MixJob& job = spec->jobs[i];
    job.nodes = 0;
    if (auto v = e.optional("nodes")) {
      if (v->is_sequence())
        v->fail("expected one node count per job (a list of counts is the single-job form's)");
      job.nodes = v->as_int_field(1, kMaxCount);
    }
    if (auto v = e.optional("gpus")) {
      if (e.has("nodes")) v->fail("expected nodes or gpus, not both");
      const int g = v->as_int_field(1, kMaxCount);
      if (node_gpus == 0)
        v->fail("expected nodes and gpus_per_node: the node types of " + machine.name +
                " differ in GPU count");
      if (g <= node_gpus) {
        job.nodes = 1;
      } else if (g % node_gpus == 0) {
        job.nodes = g / node_gpus;
      } else {
        v->fail(fmt::format("expected at most {} or a multiple of {} (whole {} nodes), got {}",
                            node_gpus, node_gpus, machine.name, g));
      }
      // `gpus` sizes the job in full: its GPUs per node replace the file's gpus_per_node (whole
      // nodes ran at that default: gpus: 12 on 6-GPU nodes with gpus_per_node: 4 ran 8 GPUs).
      gpus_per_node[i] = std::min(g, node_gpus);
      check_gpus_per_node(e, g, node_gpus, gpus_per_node[i]);
    }
    if (auto l = e.optional("node_list")) {
      const std::vector<ConfigNode> items = l->items();
      if (!l->is_sequence() || items.empty()) l->fail("expected a list of node indices");
      if (job.nodes > 0 && job.nodes != static_cast<int>(items.size()))
        l->fail(fmt::format("expected {} node{} (as the job's size says), got {}", job.nodes,
                            job.nodes == 1 ? "" : "s", items.size()));
      for (const ConfigNode& n : items) {
        const int node = n.as_int_field(0, spec->machine_nodes - 1);
        if (used[node])
          n.fail(owner[node] == static_cast<int>(i)
                     ? fmt::format("node {} is listed twice", node)
                     : fmt::format("node {} is already used by job '{}'", node,
                                   spec->jobs[owner[node]].name));
        used[node] = 1;
        owner[node] = static_cast<int>(i);
        job.node_list.push_back(node);
      }
      job.nodes = static_cast<int>(items.size());
      job.explicit_nodes = true;
    }
    if (job.nodes == 0)
      e.fail(job.kind == MixJob::Kind::kIo ? "expected nodes or node_list"
                                           : "expected nodes, gpus or node_list");
    if (job.kind == MixJob::Kind::kIo) {
      if (!machine.pfs.present)
        e.fail("platform " + machine.name + " has no parallel file system (storage.pfs) to read");
      job.read_rate_Bps =
          e.required("read_rate")
              .as_quantity_in(Quantity::kBandwidth, kMinReadRate_Bps, kMaxReadRate_Bps);
      job.request_bytes = e.quantity_in_or("request_size", Quantity::kSize, kMinRequestBytes,
                                           kMaxRequestBytes, job.request_bytes);
      // A read moves whole bytes (the engine truncated 1.5 B to 1 and counted 1.5): "1.1KB" is
      // 1100 within rounding, "1.5B" is not a size a request can have.
      const double whole = std::round(job.request_bytes);
      if (std::fabs(job.request_bytes - whole) > 1e-9 * whole)
        e.required("request_size")
            .fail(fmt::format("expected a whole number of bytes, got \"{}\" ({} bytes)",
                              e.required("request_size").as_string(), job.request_bytes));
      job.request_bytes = whole;
      if (auto v = e.optional("duration")) {
        job.duration_s = v->as_quantity_in(Quantity::kTime, 0.0, kMaxStart_s, true);
        // Each node reads whole requests, read_rate / nodes x duration of them in all: a window
        // shorter than one request read more than it asked (a 1 ms job at 10 GB/s reported
        // 11.5 GB/s).
        const double per_node_bytes =
            job.read_rate_Bps / static_cast<double>(job.nodes) * job.duration_s;
        if (per_node_bytes < job.request_bytes)
          v->fail(fmt::format(
              "expected a duration in which every node ({} in all) reads at least "
              "one request of {} at {} per node (at least {}), got \"{}\"",
              job.nodes, common::format_quantity(job.request_bytes, Quantity::kSize),
              common::format_quantity(job.read_rate_Bps / job.nodes, Quantity::kBandwidth),
              common::format_quantity(job.request_bytes * job.nodes / job.read_rate_Bps,
                                      Quantity::kTime),
              v->as_string()));
      }
    }
  }
  // The policy for the rest, in the order of the file.
  int taken = 0;
  for (const char u : used) taken += u;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    MixJob& job = spec->jobs[i];
    if (job.explicit_nodes) continue;
    const std::vector<int> free = free_nodes(used);
    if (job.nodes > static_cast<int>(free.size())) {
      const ConfigNode& e = entries[i];
      (e.has("nodes") ? e.required("nodes") : e.required("gpus"))
          .fail(fmt::format("expected at most {} node{}: {} and the jobs before this one take {} "
                            "(cluster.nodes sets the machine's size)",
                            free.size(), free.size() == 1 ? "" : "s", machine_text, taken));
    }
    job.node_list = place(spec->placement, free, job.nodes, spec->seed, static_cast<int>(i));
    for (int n : job.node_list) used[n] = 1;
    taken += job.nodes;
  }
  // The mix builds the machine up to the last node any job uses (run_mix).
  int built = 0;
  for (const MixJob& job : spec->jobs)
    for (int n : job.node_list) built = std::max(built, n + 1);
  if (built > platforms::kMaxBuiltNodes) {
    (root.has("placement") ? root.required("placement") : jobs)
        .fail(fmt::format("the jobs' nodes reach node {} of the machine, which is built up to "
                          "there: more than the {} nodes scalecast builds for one simulation "
                          "(use placement: packed, node lists nearer the start, or a smaller "
                          "cluster.nodes)",
                          common::format_count(built - 1),
                          common::format_count(platforms::kMaxBuiltNodes)));
  }
  // An I/O job reads read_rate / request_size requests a second; SimGrid's cost per request
  // grows with the requests before it, so a long window never ended (1e6 s at 20 GB/s in 16 MiB
  // requests, 1.2e9 of them). The window is the duration, or at least until the last training
  // job starts; the engine checks the rest (IoJobSpec::max_requests).
  double last_start = 0.0;
  for (const MixJob& job : spec->jobs)
    if (job.kind == MixJob::Kind::kTraining) last_start = std::max(last_start, job.start_s);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const MixJob& job = spec->jobs[i];
    if (job.kind != MixJob::Kind::kIo) continue;
    const bool timed = job.duration_s > 0.0;
    const double window = timed ? job.duration_s : std::max(0.0, last_start - job.start_s);
    const double requests = job.read_rate_Bps * window / job.request_bytes;
    if (requests > static_cast<double>(kMaxIoRequests)) {
      const ConfigNode& e = entries[i];
      (timed ? e.required("duration") : e)
          .fail(fmt::format(
              "expected at most {} requests ({:.3g} of {} at {}), the most scalecast simulates "
              "per I/O job; {} (give a larger request_size, a lower read_rate{})",
              common::format_count(kMaxIoRequests), requests,
              common::format_quantity(job.request_bytes, Quantity::kSize),
              common::format_quantity(job.read_rate_Bps, Quantity::kBandwidth),
              timed ? fmt::format("its duration is {}",
                                  common::format_quantity(window, Quantity::kTime))
                    : fmt::format("it reads until the training jobs end, at least {} after "
                                  "its start (the last training job starts then)",
                                  common::format_quantity(window, Quantity::kTime)),
              timed ? " or a shorter duration" : " or a duration"));
    }
  }
  // Each training job's scenario at its size.
  for (std::size_t i = 0; i < entries.size(); ++i) {
    MixJob& job = spec->jobs[i];
    if (job.kind != MixJob::Kind::kTraining) continue;
    job.scenario = load_training(root, entries[i], source, job.name, job.nodes, gpus_per_node[i]);
  }
  Scenario s = spec->jobs[first_training].scenario;
  s.source_file = source;
  s.name = root.string_or("name", std::filesystem::path(source).stem().string());
  YAML::Emitter out;
  out << root.raw();
  s.resolved_yaml = std::string(out.c_str()) + "\n";
  s.multi = std::move(spec);
  return s;
}

MixResult run_mix(const Scenario& s, int alone, const MixPricing& pricing) {
  if (!s.multi) throw std::invalid_argument("run_mix: the scenario has no jobs");
  const MultiJobSpec& m = *s.multi;
  if (alone >= static_cast<int>(m.jobs.size()) ||
      (alone >= 0 && m.jobs[alone].kind != MixJob::Kind::kTraining))
    throw std::invalid_argument("run_mix: job " + std::to_string(alone) +
                                " is not a training job of the scenario");
  if (pricing.cost.size() != m.jobs.size() || pricing.db.size() != m.jobs.size())
    throw std::invalid_argument("run_mix: one cost model and database entry per job expected");
  const platforms::Platform machine = sized_platform(s, platforms::load_platform(s.platform), 1);
  auto engine = create_engine({s.network});
  BuildOptions options;
  options.network = s.network;
  // The same machine for the mix and for each job alone: up to the last node any job uses.
  options.nodes = 1;
  for (const MixJob& job : m.jobs)
    for (int n : job.node_list) options.nodes = std::max(options.nodes, n + 1);
  auto platform = build_platform(*engine, machine, options);
  MixResult r;
  std::vector<ScheduledJob> training;
  std::vector<IoJobSpec> io;
  std::vector<ScheduledPipelineJob> pipelines;
  for (std::size_t k = 0; k < m.jobs.size(); ++k) {
    const MixJob& job = m.jobs[k];
    if (alone >= 0 && static_cast<int>(k) != alone) continue;
    if (job.kind == MixJob::Kind::kIo) {
      IoJobSpec& spec = io.emplace_back();
      spec.name = job.name;
      spec.nodes = job.node_list;
      spec.read_rate_Bps = job.read_rate_Bps;
      spec.request_bytes = job.request_bytes;
      spec.start_s = job.start_s;
      spec.duration_s = job.duration_s;
      spec.file = job.at.file;
      spec.line = job.at.line;
      spec.column = job.at.column;
      spec.key = job.at.key;
      r.io_index.push_back(static_cast<int>(k));
      continue;
    }
    if (!pricing.cost[k]) throw std::invalid_argument("run_mix: no cost model for " + job.name);
    if (job.scenario.llm) {
      LlmJobPlan plan = plan_llm_job(job.scenario, job.nodes, job.scenario.gpus_per_node,
                                     job.node_list, *platform, *pricing.cost[k]);
      plan.spec.name = job.name;
      pipelines.push_back({std::move(plan.spec), job.start_s});
      r.llm.push_back(std::move(plan.result));
      r.llm_index.push_back(static_cast<int>(k));
      continue;
    }
    JobSpec spec = point_job_spec(job.scenario, PointRequest(job.nodes, 0), job.node_list, machine,
                                  platform.get(), *pricing.cost[k], pricing.db[k]);
    spec.name = job.name;
    training.push_back({std::move(spec), job.start_s});
    r.job_index.push_back(static_cast<int>(k));
  }
  JobMix mix(*platform, std::move(training), std::move(io), std::move(pipelines));
  mix.run();
  r.training = mix.results();
  r.io = mix.io_results();
  // An I/O job without a duration reads while the training jobs run (sim/multi_job.hpp): one
  // that starts after they all ended read nothing, and the run said "read 0.00 of 100.00 GB/s
  // asked" with exit 0.
  for (std::size_t i = 0; i < r.io.size(); ++i) {
    const MixJob& job = m.jobs[static_cast<std::size_t>(r.io_index[i])];
    if (job.duration_s > 0.0 || r.io[i].end_s > job.start_s) continue;
    const KeyLocation& at = job.start_at.key.empty() ? job.at : job.start_at;
    throw ConfigError(
        at.file, at.line, at.column, at.key,
        fmt::format("expected a start before the training jobs end: I/O job '{}' has no duration, "
                    "so it reads while they run, and they ended before {} (give it a duration "
                    "or an earlier start)",
                    job.name, common::format_quantity(job.start_s, Quantity::kTime)));
  }
  std::vector<PipelineResult> done = mix.pipeline_results();
  for (std::size_t i = 0; i < done.size(); ++i) finish_llm_result(r.llm[i], std::move(done[i]));
  return r;
}

}  // namespace scalecast::sim
