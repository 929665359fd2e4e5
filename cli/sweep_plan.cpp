#include "cli/sweep_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "cli/scenario_inputs.hpp"
#include "common/atomic_file.hpp"
#include "common/config_error.hpp"
#include "common/input_file.hpp"
#include "sim/llm_outputs.hpp"
#include "sim/outputs.hpp"
#include "sim/scenario.hpp"
#include "sim/time_to_train.hpp"

namespace scalecast::cli {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Text from a file as a message quotes it: at most 120 characters.
std::string shown(const std::string& text) {
  return text.size() <= 120 ? text : text.substr(0, 117) + "...";
}

// A JSON number written as a whole number (not 2.0 or 1e3), within 64 bits.
std::optional<std::int64_t> whole(const Json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  return std::nullopt;
}

Json plan_core(const SweepPlan& p) {
  Json j;
  j["workdir"] = p.workdir;
  j["scenario"] = p.scenario;
  j["overrides"] = p.overrides;
  j["keys"] = p.keys;
  j["combos"] = p.combos;
  j["nodes"] = p.nodes;
  if (p.llm) j["llm"] = true;  // plans of data-parallel sweeps keep their bytes
  return j;
}

std::string plan_json(const SweepPlan& p) {
  Json j = plan_core(p);
  Json inputs = Json::array();
  for (const SweepPlan::Input& in : p.inputs)
    inputs.push_back({{"role", in.role}, {"path", in.path}, {"fingerprint", in.fingerprint}});
  j["inputs"] = inputs;
  return j.dump(2) + "\n";
}

std::vector<SweepPlan::Input> inputs_of(const Json& j) {
  std::vector<SweepPlan::Input> out;
  if (!j.contains("inputs")) return out;
  for (const Json& in : j.at("inputs"))
    out.push_back({in.at("role").get<std::string>(), in.at("path").get<std::string>(),
                   in.at("fingerprint").get<std::string>()});
  return out;
}

[[noreturn]] void input_changed(const SweepPlan& plan, const std::string& what) {
  throw common::ConfigError(
      "--out", 0, 0, "",
      fmt::format("{} changed since the sweep in {} was planned (its results would mix old and "
                  "new inputs); give another --out, or remove {} to start afresh",
                  what, plan.dir, plan.dir));
}

std::string points_jsonl(const SweepPlan& p) {
  std::string out;
  for (const PlannedPoint& q : p.points) {
    Json j;
    j["id"] = q.id;
    j["combo"] = q.combo;
    j["nodes"] = q.nodes;
    j["gpus_per_node"] = q.gpus_per_node;
    j["role"] = q.role;
    j["out_dir"] = q.folder;  // relative: a copied or moved folder works on itself
    out += j.dump() + "\n";
  }
  return out;
}

// A point's result for the merge, checked: a result file that is no JSON object (a disk that
// filled, an edit), or whose figures cannot be its planned point's, is an error naming it and the
// point and saying how to rerun it, not a bare parser message or a row of nonsense in sweep.csv.
// `scenario_gpus_per_node`: the combination's scenario's gpus_per_node (0: every GPU of a node).
Json read_result(const SweepPlan& plan, const PlannedPoint& p, int scenario_gpus_per_node) {
  const std::string path = fmt::format("{}/results/point-{}.json", plan.dir, p.id);
  const std::string rerun =
      fmt::format("remove it and run the point again (`scalecast sweep --run-task {} --out {}`)",
                  p.id, plan.dir);
  const auto bad = [&](const std::string& what) {
    return common::ConfigError(path, 0, 0, "",
                               fmt::format("the result of point {} {}; {}", p.id, what, rerun));
  };
  Json r;
  try {
    r = Json::parse(read_file(path));
  } catch (const Json::exception& e) {
    throw bad(fmt::format("is not valid JSON ({})", e.what()));
  }
  if (!r.is_object()) throw bad("is not a JSON object");
  try {
    // `key`: a JSON pointer without its first '/' ("breakdown/compute_s"); a figure that is not
    // there is a Json::exception (the message below).
    const auto figure = [&](const std::string& key) -> const Json& {
      return r.at(Json::json_pointer("/" + key));
    };
    const auto named = [](std::string key) {
      std::replace(key.begin(), key.end(), '/', '.');
      return key;
    };
    // A time, throughput or share: a finite number, > 0 (`positive`) or >= 0.
    const auto number = [&](const std::string& key, bool positive) {
      const Json& v = figure(key);
      const double x = v.is_number() ? v.get<double>() : std::nan("");
      if (!std::isfinite(x) || (positive ? !(x > 0.0) : x < 0.0))
        throw bad(fmt::format("has {} {}, expected a finite number {} 0", named(key),
                              shown(v.dump()), positive ? ">" : ">="));
    };
    const auto count = [&](const std::string& key, std::int64_t lo, std::int64_t hi) {
      const Json& v = figure(key);
      const std::optional<std::int64_t> n = whole(v);
      if (!n || *n < lo || *n > hi)
        throw bad(fmt::format("has {} {}, expected a whole number from {} to {}", named(key),
                              shown(v.dump()), lo, hi));
      return *n;
    };
    const auto text = [&](const std::string& key) {
      const Json& v = figure(key);
      if (!v.is_string())
        throw bad(fmt::format("has {} {}, expected a text", named(key), shown(v.dump())));
    };
    // A figure the point derives from others (throughput from the batch and the time): an edit
    // of one alone shows.
    const auto same = [&](const std::string& key, double derived, const char* rule) {
      const double x = figure(key).get<double>();
      if (!(std::abs(x - derived) <= 1e-9 * std::abs(derived)))
        throw bad(fmt::format("has {} {}, but {} is {}", named(key), shown(figure(key).dump()),
                              rule, fmt::format("{:.9g}", derived)));
    };
    constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();
    const std::int64_t nodes = count("nodes", 1, kMaxInt);
    if (nodes != p.nodes)
      throw bad(fmt::format("claims {} nodes, its planned point has {}", nodes, p.nodes));
    const std::int64_t gpn = count("gpus_per_node", 1, kMaxInt / nodes);
    const int want_gpn = p.gpus_per_node > 0 ? p.gpus_per_node : scenario_gpus_per_node;
    if (want_gpn > 0 && gpn != want_gpn)
      throw bad(fmt::format("claims {} GPUs per node, its planned point runs {}{}", gpn, want_gpn,
                            p.gpus_per_node > 0 ? "" : " (the scenario's gpus_per_node)"));
    const std::int64_t gpus = count("gpus", 1, kMaxInt);
    if (gpus != nodes * gpn)
      throw bad(fmt::format("claims {} GPUs, its {} node{} of {} GPU{} are {}", gpus, nodes,
                            nodes == 1 ? "" : "s", gpn, gpn == 1 ? "" : "s", nodes * gpn));
    number("iteration_time_s", true);
    text("fidelity");
    if (plan.llm) {
      for (const char* k : {"throughput_tokens_per_s", "tokens_per_s_per_gpu"}) number(k, true);
      for (const char* k : {"mfu", "hfu"}) number(k, false);
      for (const char* part : {"compute_s", "optimizer_s", "bubble_s", "exposed_tp_s",
                               "exposed_cp_s", "exposed_pp_s", "exposed_dp_s"})
        number(std::string("breakdown/") + part, false);
      text("model");
      for (const char* k : {"schedule", "precision"}) text(std::string("parallel/") + k);
      for (const char* k : {"tp", "pp", "cp", "dp", "virtual_stages"})
        count(std::string("parallel/") + k, 1, kMaxInt);
      for (const char* k : {"micro_batches", "micro_batch", "seq_len"})
        count(std::string("parallel/") + k, 1, std::numeric_limits<std::int64_t>::max());
      same("tokens_per_s_per_gpu", figure("throughput_tokens_per_s").get<double>() / gpus,
           "throughput_tokens_per_s / gpus");
      count("bottleneck_stage/stage", 0, count("parallel/pp", 1, kMaxInt) - 1);
      text("bottleneck_stage/gpu");
    } else {
      number("throughput_samples_per_s", true);
      number("batch_per_gpu", true);
      number("gpu_utilization", false);
      same("throughput_samples_per_s",
           gpus * figure("batch_per_gpu").get<double>() / figure("iteration_time_s").get<double>(),
           "gpus x batch_per_gpu / iteration_time_s");
      for (const char* part : {"compute_s", "exposed_comm_s", "io_stall_s", "copy_s", "idle_s"})
        number(std::string("breakdown/") + part, false);
      if (r.contains("op_costs")) {  // the table's line on what priced the ops
        number("op_costs/measured_time_share", false);
        const Json& tiers = figure("op_costs/tiers");
        if (!tiers.is_object())
          throw bad(fmt::format("has op_costs.tiers {}, expected a map", shown(tiers.dump())));
        for (const auto& [tier, use] : tiers.items())
          if (!use.is_object() || !whole(use.at("ops")))
            throw bad(fmt::format("has op_costs.tiers.{} {}, expected {{\"ops\": N, ...}}", tier,
                                  shown(use.dump())));
      }
    }
  } catch (const Json::exception& e) {
    // A figure the merge reads is not there (the message the merge gave before it named files).
    throw common::ConfigError(
        plan.dir + "/results", 0, 0, "",
        fmt::format("a point's result lacks a figure the merge reads ({}): {}, point {}; {}",
                    e.what(), path, p.id, rerun));
  }
  return r;
}

std::vector<std::string> point_sets(const SweepPlan& plan, int combo) {
  std::vector<std::string> sets = plan.overrides;
  sets.insert(sets.end(), plan.combos[combo].begin(), plan.combos[combo].end());
  return sets;
}

// A combination's folder relative to the sweep folder.
std::string combo_folder(std::size_t combos, int combo) {
  return combos > 1 ? fmt::format("combo-{}", combo) : std::string("points");
}

std::string combo_dir(const SweepPlan& plan, int combo) {
  return plan.dir + "/" + combo_folder(plan.combos.size(), combo);
}

// An axis value as the scenario loader reads it: the number of "02", "2.0" and "2" is one, a word
// is its text, a list or map its YAML form; a value that is no YAML stays as written (the
// loader names it).
std::string canonical_value(const std::string& v) {
  try {
    const YAML::Node n = YAML::Load(v);
    if (n.IsScalar()) {
      double d = 0.0;
      if (YAML::convert<double>::decode(n, d) && std::isfinite(d))
        return fmt::format("number {}", d);
      return "word " + n.Scalar();
    }
    YAML::Emitter out;
    out << YAML::Flow << n;
    return "yaml " + std::string(out.c_str());
  } catch (const YAML::Exception&) {
    return "text " + v;
  }
}

// A --set or --axis key with each list index written as its number ("jobs.01.nodes" is
// "jobs.1.nodes").
std::string canonical_key(const std::string& key) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t dot = 0; dot != std::string::npos; start = dot + 1) {
    dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos) {
      const std::size_t nz = part.find_first_not_of('0');
      part = nz == std::string::npos ? "0" : part.substr(nz);
    }
    out += (start == 0 ? "" : ".") + part;
  }
  return out;
}

// The axes' keys and combinations (cartesian product of KEY=V1,V2,..., the last axis varying
// fastest) for a sweep over `nodes`; a common::ConfigError at the --axis that is malformed,
// repeats a key or a value, overlaps a --set or passes kMaxSweepPoints.
struct AxisGrid {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> combos;
};

AxisGrid expand_axes(const std::vector<std::string>& overrides,
                     const std::vector<std::string>& axes, const std::vector<int>& nodes,
                     bool llm) {
  AxisGrid grid;
  grid.combos = {{}};
  const auto key_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  // `a` is `b` or a key inside it (b.x, b.0): setting b replaces what a set. A list index is a
  // number, so 01 and 1 are one item (the loader reads both as item 1).
  const auto within = [](const std::string& a_key, const std::string& b_key) {
    const std::string a = canonical_key(a_key), b = canonical_key(b_key);
    return a == b || (a.size() > b.size() && a.compare(0, b.size(), b) == 0 && a[b.size()] == '.');
  };
  // Points of one combination: its node counts, and the 1-GPU and 1-node baselines.
  const std::size_t per_combo = plan_points(1, nodes, llm).size();
  const auto too_many = [&](std::size_t combos, const std::string& where) {
    if (combos * per_combo <= kMaxSweepPoints) return;
    throw common::ConfigError(
        where, 0, 0, "",
        fmt::format("the sweep would plan {} points ({} combination{} x {} point{} each: the "
                    "node counts{}); at most {} (one process each): split it into several sweeps",
                    combos * per_combo, combos, combos == 1 ? "" : "s", per_combo,
                    per_combo == 1 ? "" : "s", llm ? "" : " and the baselines", kMaxSweepPoints));
  };
  too_many(1, "--nodes");
  for (const std::string& axis : axes) {
    const auto eq = axis.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == axis.size())
      throw common::ConfigError("--axis", 0, 0, axis, "expected KEY=V1,V2");
    const std::string key = axis.substr(0, eq);
    // Every point runs at its own node count (--nodes, or the scenario's): an axis over `nodes`
    // (or one of its entries) would only relabel the rows.
    if (within(key, "nodes"))
      throw common::ConfigError(
          "--axis", 0, 0, axis,
          "give node counts with --nodes (e.g. --nodes 1,2,4), not as an axis");
    // Two axes over one key made two CSV columns of one name, each row labelled with a value
    // the other axis overrode; a --set of an axis key was overridden by every combination.
    for (std::size_t k = 0; k < grid.keys.size(); ++k)
      if (within(key, grid.keys[k]) || within(grid.keys[k], key))
        throw common::ConfigError(
            "--axis " + key, 0, 0, "",
            fmt::format("{} is also given by --axis {}; give each key in one --axis with all its "
                        "values (e.g. --axis {}=V1,V2,V3)",
                        key, axes[k], grid.keys[k]));
    for (const std::string& set : overrides)
      if (within(key_of(set), key) || within(key, key_of(set)))
        throw common::ConfigError(
            "--axis " + key, 0, 0, "",
            fmt::format("{} is also given by --set {}; a key is either an axis (its values, one "
                        "per combination) or a --set (one value for every point), not both",
                        key, set));
    grid.keys.push_back(key);
    std::vector<std::string> values;
    std::unordered_map<std::string, std::size_t> canonical;  // a value's form -> its index
    std::stringstream ss(axis.substr(eq + 1));
    for (std::string v; std::getline(ss, v, ',');) {
      // Each value is one combination folder: a repeated one ran twice into it, also when
      // written another way (02 and 2 are one number).
      const auto [it, fresh] = canonical.emplace(canonical_value(v), values.size());
      if (!fresh) {
        const std::string& first = values[it->second];
        throw common::ConfigError(
            "--axis", 0, 0, axis,
            first == v ? "value \"" + v + "\" is listed twice"
                       : fmt::format("values \"{}\" and \"{}\" are one value", first, v));
      }
      values.push_back(v);
    }
    too_many(grid.combos.size() * values.size(), "--axis " + key);
    std::vector<std::vector<std::string>> next;
    for (const auto& c : grid.combos)
      for (const std::string& v : values) {
        auto n = c;
        n.push_back(grid.keys.back() + "=" + v);
        next.push_back(n);
      }
    grid.combos = next;
  }
  return grid;
}

}  // namespace

std::vector<PlannedPoint> plan_points(std::size_t combos, const std::vector<int>& nodes, bool llm) {
  const bool has_one_node = std::find(nodes.begin(), nodes.end(), 1) != nodes.end();
  std::vector<PlannedPoint> points;
  for (int c = 0; c < static_cast<int>(combos); ++c) {
    const std::string cdir = combo_folder(combos, c);
    for (int n : nodes)
      points.push_back({static_cast<int>(points.size()), c, n, 0, "point",
                        nodes.size() == 1 ? cdir : cdir + "/nodes-" + std::to_string(n)});
    if (llm) continue;  // an LLM job has one size: no 1-GPU or 1-node baseline
    points.push_back({static_cast<int>(points.size()), c, 1, 1, "one_gpu", ""});
    if (!has_one_node) points.push_back({static_cast<int>(points.size()), c, 1, 0, "one_node", ""});
  }
  return points;
}

std::string point_dir(const SweepPlan& plan, const PlannedPoint& p) {
  return p.folder.empty() ? std::string() : plan.dir + "/" + p.folder;
}

SweepPlan make_plan(const std::string& scenario, const std::vector<std::string>& overrides,
                    const std::vector<std::string>& axes, const std::vector<int>& nodes,
                    const std::string& dir, bool llm) {
  SweepPlan plan;
  plan.llm = llm;
  plan.dir = fs::absolute(dir).lexically_normal().string();
  plan.workdir = fs::current_path().string();
  plan.scenario = fs::absolute(scenario).lexically_normal().string();
  plan.overrides = overrides;
  plan.nodes = nodes;
  AxisGrid grid = expand_axes(overrides, axes, nodes, llm);
  plan.keys = std::move(grid.keys);
  plan.combos = std::move(grid.combos);
  plan.points = plan_points(plan.combos.size(), nodes, llm);
  return plan;
}

void record_inputs(SweepPlan& plan) {
  plan.inputs.clear();
  for (int c = 0; c < static_cast<int>(plan.combos.size()); ++c)
    for (const InputFile& f : scenario_input_files(plan.scenario, point_sets(plan, c))) {
      bool seen = false;
      for (const SweepPlan::Input& in : plan.inputs) seen = seen || in.path == f.path;
      if (!seen) plan.inputs.push_back({f.role, f.path, file_fingerprint(f.path)});
    }
}

void check_inputs(const SweepPlan& plan) {
  for (const SweepPlan::Input& in : plan.inputs) {
    std::error_code ec;
    if (!fs::is_regular_file(in.path, ec))
      input_changed(plan, fmt::format("the {} file {} (now missing)", in.role, in.path));
    if (file_fingerprint(in.path) != in.fingerprint)
      input_changed(plan, fmt::format("the {} file {}", in.role, in.path));
  }
}

namespace {

common::ConfigError malformed_error(const std::string& file, int line, const std::string& key,
                                    const std::string& what) {
  return common::ConfigError(
      file, line, 0, key,
      fmt::format("malformed sweep plan: {}; plan the sweep afresh into another --out", what));
}

[[noreturn]] void malformed(const std::string& file, int line, const std::string& key,
                            const std::string& what) {
  throw malformed_error(file, line, key, what);
}

// points.jsonl must hold plan.points (plan_points() of plan.json), line i point i: nothing in it
// is trusted, it is only checked. An out_dir is the point's folder relative to the sweep folder;
// an absolute one (written by earlier versions) ends in that folder, under one folder for every
// line (the folder it was planned in), and is ignored: point_dir() is inside plan.dir.
void check_points_file(const SweepPlan& plan) {
  const std::string path = plan.dir + "/points.jsonl";
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::runtime_error&) {
    malformed(path, 0, "", "the file is missing or cannot be read");
  }
  const auto count_differs = [&](std::size_t lines) {
    return malformed_error(
        path, 0, "",
        fmt::format("plan.json's combinations and node counts give {} point{}, the file "
                    "has {}{}",
                    plan.points.size(), plan.points.size() == 1 ? "" : "s",
                    lines > plan.points.size() ? "more" : std::to_string(lines),
                    lines == 0 ? " (it is empty)" : ""));
  };
  std::istringstream lines(text);
  std::string planned_in;  // an earlier version's absolute out_dir: the folder planned in
  std::size_t n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    if (n >= plan.points.size()) throw count_differs(n + 1);
    const PlannedPoint& want = plan.points[n];
    const auto differs = [&] {
      Json w;
      w["id"] = want.id;
      w["combo"] = want.combo;
      w["nodes"] = want.nodes;
      w["gpus_per_node"] = want.gpus_per_node;
      w["role"] = want.role;
      w["out_dir"] = want.folder;
      return malformed_error(path, static_cast<int>(n + 1), "",
                             fmt::format("expected point {} as plan.json gives it, {}, got {}",
                                         want.id, w.dump(), shown(line)));
    };
    Json got;
    try {
      got = Json::parse(line);
    } catch (const Json::exception&) {
      throw differs();
    }
    if (!got.is_object() || got.size() != 6) throw differs();
    const auto same = [&](const char* key, int v) {
      const auto it = got.find(key);
      return it != got.end() && whole(*it) == std::optional<std::int64_t>(v);
    };
    const auto text_of = [&](const char* key) {
      const auto it = got.find(key);
      return it != got.end() && it->is_string() ? std::optional(it->get<std::string>())
                                                : std::nullopt;
    };
    if (!same("id", want.id) || !same("combo", want.combo) || !same("nodes", want.nodes) ||
        !same("gpus_per_node", want.gpus_per_node) || text_of("role") != want.role)
      throw differs();
    const std::optional<std::string> out = text_of("out_dir");
    if (!out) throw differs();
    if (*out == want.folder) continue;
    const std::string tail = "/" + want.folder;
    if (want.folder.empty() || !fs::path(*out).is_absolute() || out->size() <= tail.size() ||
        out->compare(out->size() - tail.size(), tail.size(), tail) != 0)
      throw differs();
    const std::string root = out->substr(0, out->size() - tail.size());
    if (planned_in.empty()) planned_in = root;
    if (root != planned_in) throw differs();
  }
  if (n != plan.points.size()) throw count_differs(n);
}

}  // namespace

void write_plan(const SweepPlan& plan) {
  const std::string text = plan_json(plan), lines = points_jsonl(plan);
  const std::string plan_path = plan.dir + "/plan.json";
  if (fs::exists(plan_path)) {
    Json old;
    try {
      old = Json::parse(read_file(plan_path));
    } catch (const Json::exception&) {
      old = Json::object();
    }
    if (!old.is_object()) old = Json::object();
    std::vector<SweepPlan::Input> recorded;
    try {
      recorded = inputs_of(old);
    } catch (const Json::exception&) {
      recorded.clear();  // no fingerprints to trust: refused below
    }
    old.erase("inputs");
    if (old.dump(2) != plan_core(plan).dump(2))
      throw common::ConfigError("command line", 0, 0, "--out",
                                plan.dir +
                                    " holds another sweep (its plan.json differs from this one); "
                                    "give another --out, or remove the folder to start afresh");
    // The same plan.json: its points.jsonl must be the points it gives (an earlier version's
    // absolute folders included).
    check_points_file(plan);
    // The same sweep: resume it, unless an input file changed since.
    if (recorded.empty()) input_changed(plan, "the inputs (the plan records no fingerprints)");
    for (const SweepPlan::Input& in : plan.inputs) {
      bool same = false;
      for (const SweepPlan::Input& r : recorded)
        same = same || (r.path == in.path && r.fingerprint == in.fingerprint);
      if (!same) input_changed(plan, fmt::format("the {} file {}", in.role, in.path));
    }
    return;
  }
  fs::create_directories(plan.dir + "/results");
  common::write_file_atomic(plan.dir + "/points.jsonl", lines);
  common::write_file_atomic(plan_path, text);  // last: a plan.json means a complete plan
}

SweepPlan read_plan(const std::string& dir) {
  SweepPlan plan;
  plan.dir = fs::absolute(dir).lexically_normal().string();
  const std::string path = plan.dir + "/plan.json";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw common::ConfigError(
        "--out", 0, 0, "",
        fmt::format("{} {}; plan one with `scalecast sweep SCENARIO --out {}`", plan.dir,
                    fs::is_directory(plan.dir, ec) ? "holds no sweep plan (plan.json)"
                                                   : "is not a sweep folder (no such folder)",
                    dir));
  Json j;
  try {
    j = Json::parse(read_file(path));
  } catch (const std::exception& e) {
    malformed(path, 0, "", e.what());
  }
  if (!j.is_object()) malformed(path, 0, "", "expected a JSON object, got " + shown(j.dump()));
  const auto key = [&](const char* k) -> const Json& {
    if (!j.contains(k)) malformed(path, 0, "", fmt::format("it has no \"{}\"", k));
    return j.at(k);
  };
  const auto absolute_path = [&](const char* k) {
    const Json& v = key(k);
    if (!v.is_string() || !fs::path(v.get<std::string>()).is_absolute())
      malformed(path, 0, k, "expected an absolute path, got " + shown(v.dump()));
    return v.get<std::string>();
  };
  const auto texts = [&](const Json& v, const char* k) {
    std::vector<std::string> out;
    if (!v.is_array()) malformed(path, 0, k, "expected a list of texts, got " + shown(v.dump()));
    for (const Json& t : v) {
      if (!t.is_string()) malformed(path, 0, k, "expected a list of texts, got " + shown(v.dump()));
      out.push_back(t.get<std::string>());
    }
    return out;
  };
  plan.workdir = absolute_path("workdir");
  plan.scenario = absolute_path("scenario");
  plan.overrides = texts(key("overrides"), "overrides");
  try {
    sim::parse_overrides(plan.overrides);
  } catch (const common::ConfigError& e) {
    malformed(path, 0, "overrides", e.what());
  }
  plan.keys = texts(key("keys"), "keys");
  const Json& combos = key("combos");
  if (!combos.is_array() || combos.empty())
    malformed(
        path, 0, "combos",
        "expected a list of combinations (each a list of KEY=VALUE), got " + shown(combos.dump()));
  if (combos.size() > kMaxSweepPoints)  // each is at least one point
    malformed(
        path, 0, "combos",
        fmt::format("expected at most {} combinations, got {}", kMaxSweepPoints, combos.size()));
  for (const Json& c : combos) plan.combos.push_back(texts(c, "combos"));
  // Node counts as --nodes takes them: each a whole number 1..1,000,000, once.
  const Json& nodes = key("nodes");
  const auto bad_nodes = [&](const std::string& why) {
    malformed(path, 0, "nodes",
              fmt::format("expected a list of node counts, whole numbers from 1 to {}, each once "
                          "({})",
                          kMaxSweepNodes, why));
  };
  if (!nodes.is_array()) bad_nodes("got " + shown(nodes.dump()));
  if (nodes.empty()) bad_nodes("the list is empty");
  std::unordered_set<std::int64_t> seen;
  for (const Json& n : nodes) {
    const std::optional<std::int64_t> v = whole(n);
    if (!v || *v < 1 || *v > kMaxSweepNodes) bad_nodes(shown(n.dump()) + " is not one");
    if (!seen.insert(*v).second) bad_nodes(std::to_string(*v) + " is listed twice");
    plan.nodes.push_back(static_cast<int>(*v));
  }
  if (j.contains("llm")) {
    if (!j.at("llm").is_boolean())
      malformed(path, 0, "llm", "expected true or false, got " + shown(j.at("llm").dump()));
    plan.llm = j.at("llm").get<bool>();
  }
  // The combinations must be what make_plan expands from the axes they hold: every key set in
  // order, each axis's values (in their first order) combined with the others', the last fastest.
  std::vector<std::string> axes;
  for (std::size_t k = 0; k < plan.keys.size(); ++k) {
    std::vector<std::string> values;
    std::unordered_set<std::string> listed;
    for (const std::vector<std::string>& c : plan.combos) {
      if (c.size() != plan.keys.size() || c[k].rfind(plan.keys[k] + "=", 0) != 0)
        malformed(path, 0, "combos",
                  fmt::format("expected each combination to set the keys [{}] in order, got [{}]",
                              fmt::join(plan.keys, ", "), fmt::join(c, ", ")));
      const std::string v = c[k].substr(plan.keys[k].size() + 1);
      if (listed.insert(v).second) values.push_back(v);
    }
    axes.push_back(plan.keys[k] + "=" + fmt::format("{}", fmt::join(values, ",")));
  }
  AxisGrid grid;
  try {
    grid = expand_axes(plan.overrides, axes, plan.nodes, plan.llm);
  } catch (const common::ConfigError& e) {
    malformed(path, 0, "keys", fmt::format("its axes are no sweep's ({})", e.what()));
  }
  if (grid.keys != plan.keys || grid.combos != plan.combos)
    malformed(
        path, 0, "combos",
        fmt::format("expected every combination of the axes' values once, in order (the "
                    "last axis fastest): {} combination{}, got {}",
                    grid.combos.size(), grid.combos.size() == 1 ? "" : "s", plan.combos.size()));
  const Json& inputs = key("inputs");
  if (!inputs.is_array() || inputs.empty())
    malformed(
        path, 0, "inputs",
        "expected the list of input files with their fingerprints, got " + shown(inputs.dump()));
  for (const Json& in : inputs) {
    const auto field = [&](const char* k) {
      if (!in.is_object() || !in.contains(k) || !in.at(k).is_string())
        malformed(path, 0, "inputs",
                  "expected {\"role\": ..., \"path\": ..., \"fingerprint\": ...} texts, got " +
                      shown(in.dump()));
      return in.at(k).get<std::string>();
    };
    plan.inputs.push_back({field("role"), field("path"), field("fingerprint")});
  }
  // Every point process reads the scenario: a missing one failed in each child, late.
  if (!fs::is_regular_file(plan.scenario, ec))
    throw common::ConfigError(
        path, 0, 0, "scenario",
        fmt::format("the sweep's scenario {} is not a file (removed, or plan.json edited); restore "
                    "it, or plan the sweep afresh into another --out",
                    plan.scenario));
  bool recorded = false;
  for (const SweepPlan::Input& in : plan.inputs)
    recorded = recorded || (in.role == "scenario" && in.path == plan.scenario);
  if (!recorded)
    malformed(path, 0, "inputs",
              fmt::format("the scenario {} is not among the recorded inputs (its fingerprint "
                          "guards the results)",
                          plan.scenario));
  plan.points = plan_points(plan.combos.size(), plan.nodes, plan.llm);
  check_points_file(plan);
  return plan;
}

std::string result_path(const SweepPlan& plan, int id) {
  return fmt::format("{}/results/point-{}.json", plan.dir, id);
}

std::vector<int> missing_points(const SweepPlan& plan) {
  std::vector<int> ids;
  for (const PlannedPoint& p : plan.points)
    if (!fs::exists(result_path(plan, p.id))) ids.push_back(p.id);
  return ids;
}

PointJob point_job(const SweepPlan& plan, int id) {
  if (plan.points.empty())  // read_plan refuses such a plan; never "expected 0..-1"
    throw common::ConfigError("--run-task", 0, 0, "",
                              fmt::format("the sweep in {} has no points", plan.dir));
  if (id < 0 || id >= static_cast<int>(plan.points.size()))
    throw common::ConfigError(
        "--run-task", 0, 0, "",
        fmt::format("expected 0..{} (the sweep in {} has {} points), got {}",
                    plan.points.size() - 1, plan.dir, plan.points.size(), id));
  const PlannedPoint& p = plan.points[id];
  PointJob job{plan.scenario,   point_sets(plan, p.combo), p.nodes,
               p.gpus_per_node, point_dir(plan, p),        ""};
  // An LLM scenario is loaded at its one size: the point's (its parallel map is checked there).
  if (plan.llm) job.overrides.push_back("nodes=" + std::to_string(p.nodes));
  job.json_path = result_path(plan, id);
  return job;
}

namespace {

// An LLM sweep's merge: per combination the LLM table and summary.json, and sweep.csv with the
// pipeline job's figures (columns in cli/README.md, cmd_sweep.cpp).
std::string merge_llm_results(const SweepPlan& plan) {
  std::ostringstream csv;
  for (const std::string& k : plan.keys) csv << common::csv_field(k) << ',';
  static const char* const kParts[] = {"compute_s",    "optimizer_s",  "bubble_s",
                                       "exposed_tp_s", "exposed_cp_s", "exposed_pp_s",
                                       "exposed_dp_s"};
  csv << "nodes,gpus,iteration_time_s,throughput_tokens_per_s,tokens_per_s_per_gpu,mfu,hfu";
  for (const char* part : kParts) csv << ',' << part;
  csv << ",bottleneck_stage,fidelity\n";
  std::string tables;
  for (int c = 0; c < static_cast<int>(plan.combos.size()); ++c) {
    const sim::Scenario s =
        sim::load_scenario(plan.scenario, sim::parse_overrides(point_sets(plan, c)));
    std::vector<Json> points;
    for (const PlannedPoint& p : plan.points)
      if (p.combo == c) points.push_back(read_result(plan, p, s.gpus_per_node));
    tables += sim::format_llm_table(s, points);
    sim::write_summary(combo_dir(plan, c), s, points);
    for (const Json& p : points) {
      for (const std::string& kv : plan.combos[c])
        csv << common::csv_field(kv.substr(kv.find('=') + 1)) << ',';
      csv << p.at("nodes").get<int>() << ',' << p.at("gpus").get<int>();
      for (const char* k :
           {"iteration_time_s", "throughput_tokens_per_s", "tokens_per_s_per_gpu", "mfu", "hfu"})
        csv << fmt::format(",{:.9g}", p.at(k).get<double>());
      for (const char* part : kParts)
        csv << fmt::format(",{:.9g}", p.at("breakdown").at(part).get<double>());
      csv << ',' << p.at("bottleneck_stage").at("stage").get<int>() << ','
          << common::csv_field(p.at("fidelity").get<std::string>()) << '\n';
    }
  }
  common::write_file_atomic(plan.dir + "/sweep.csv", csv.str());
  return tables;
}

}  // namespace

namespace {

std::string merge_checked(const SweepPlan& plan);

}  // namespace

std::string merge_results(const SweepPlan& plan) {
  try {
    return merge_checked(plan);
  } catch (const Json::exception& e) {
    // A result that parses but lacks a figure, or holds it as another type.
    throw common::ConfigError(
        plan.dir + "/results", 0, 0, "",
        fmt::format("a point's result lacks a figure the merge reads ({}); remove the results "
                    "not written by this scalecast and run those points again",
                    e.what()));
  }
}

namespace {

std::string merge_checked(const SweepPlan& plan) {
  const std::vector<int> missing = missing_points(plan);
  if (!missing.empty())
    throw common::ConfigError(
        plan.dir, 0, 0, "",
        fmt::format("{} of {} points have no result yet (ids {}); run them with `scalecast sweep "
                    "{} --out {}` or as array tasks `scalecast sweep --run-task ID --out {}`",
                    missing.size(), plan.points.size(), id_ranges(missing), plan.scenario, plan.dir,
                    plan.dir));
  if (plan.llm) return merge_llm_results(plan);
  // Time-to-train columns only when a combination asks for it (sweep.csv stays as it was).
  std::vector<sim::Scenario> scenarios;
  bool ttt = false;
  for (int c = 0; c < static_cast<int>(plan.combos.size()); ++c) {
    scenarios.push_back(
        sim::load_scenario(plan.scenario, sim::parse_overrides(point_sets(plan, c))));
    ttt = ttt || scenarios.back().time_to_train.enabled;
  }
  std::ostringstream csv;
  for (const std::string& k : plan.keys) csv << common::csv_field(k) << ',';
  csv << "nodes,gpus,iteration_time_s,throughput_samples_per_s,efficiency_vs_1_gpu,"
         "efficiency_vs_1_node,compute_s,exposed_comm_s,io_stall_s,copy_s,idle_s,fidelity"
      << (ttt ? ",global_batch,epochs,samples_to_train,time_to_train_s,time_to_train_extrapolated"
              : "")
      << "\n";
  std::string tables;
  for (int c = 0; c < static_cast<int>(plan.combos.size()); ++c) {
    std::vector<Json> points;
    double tput_gpu = 0.0, tput_node = 0.0;
    for (const PlannedPoint& p : plan.points) {
      if (p.combo != c) continue;
      const Json r = read_result(plan, p, scenarios[c].gpus_per_node);
      const double tput = r.at("throughput_samples_per_s").get<double>();
      if (p.role == "point") points.push_back(r);
      if (p.role == "one_gpu") tput_gpu = tput;
      if (p.role == "one_node" || (p.role == "point" && p.nodes == 1)) tput_node = tput;
    }
    const sim::Scenario& s = scenarios[c];
    for (Json& p : points) {
      sim::add_efficiency(p, tput_gpu, tput_node);
      sim::add_time_to_train(s, p);
    }
    tables += sim::format_table(s, points);
    tables += sim::format_time_to_train(s, points);
    sim::write_summary(combo_dir(plan, c), s, points);
    for (const Json& p : points) {
      for (const std::string& kv : plan.combos[c])
        csv << common::csv_field(kv.substr(kv.find('=') + 1)) << ',';
      const auto eff = [&](const char* k) {
        const Json& v = p["scaling_efficiency"][k];
        return v.is_null() ? std::string() : fmt::format("{:.9g}", v.get<double>());
      };
      const Json& b = p["breakdown"];
      csv << p["nodes"].get<int>() << ',' << p["gpus"].get<int>() << ','
          << fmt::format("{:.9g},{:.9g},", p["iteration_time_s"].get<double>(),
                         p["throughput_samples_per_s"].get<double>())
          << eff("vs_1_gpu") << ',' << eff("vs_1_node") << ','
          << fmt::format("{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},", b["compute_s"].get<double>(),
                         b["exposed_comm_s"].get<double>(), b["io_stall_s"].get<double>(),
                         b["copy_s"].get<double>(), b["idle_s"].get<double>())
          << common::csv_field(p["fidelity"].get<std::string>());
      if (ttt && p.contains("time_to_train_s")) {
        csv << fmt::format(
            ",{:.9g},{},{:.9g},{:.9g},{}", p["global_batch"].get<double>(),
            p.contains("epochs") ? fmt::format("{:.9g}", p["epochs"].get<double>()) : std::string(),
            p["time_to_train"]["samples_to_train"].get<double>(),
            p["time_to_train_s"].get<double>(),
            p["time_to_train"]["extrapolated"].get<bool>() ? 1 : 0);
      } else if (ttt) {
        csv << ",,,,,";
      }
      csv << '\n';
    }
  }
  common::write_file_atomic(plan.dir + "/sweep.csv", csv.str());
  return tables;
}

}  // namespace

std::string id_ranges(const std::vector<int>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? std::to_string(ids[i]) : fmt::format("{}-{}", ids[i], ids[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace scalecast::cli
