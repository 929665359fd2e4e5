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
#include "cli/sweep_internal.hpp"
#include "common/atomic_file.hpp"
#include "common/config_error.hpp"
#include "common/input_file.hpp"
#include "sim/llm_outputs.hpp"
#include "sim/outputs.hpp"
#include "sim/scenario.hpp"
#include "sim/time_to_train.hpp"

namespace scalecast::cli {

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

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

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

// A point as its line of points.jsonl holds it.
Json point_line(const PlannedPoint& q) {
  Json j;
  j["id"] = q.id;
  j["combo"] = q.combo;
  j["nodes"] = q.nodes;
  j["gpus_per_node"] = q.gpus_per_node;
  j["role"] = q.role;
  j["out_dir"] = q.folder;  // relative: a copied or moved folder works on itself
  return j;
}

std::string points_jsonl(const SweepPlan& p) {
  std::string out;
  for (const PlannedPoint& q : p.points) out += point_line(q).dump() + "\n";
  return out;
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
                        nodes.size() == 1 ? cdir : cdir + "/" + sim::nodes_folder(n)});
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
      const Json w = point_line(want);
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

}  // namespace scalecast::cli
