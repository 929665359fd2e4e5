#include "cli/sweep_plan.hpp"

#include <fmt/format.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

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
    j["out_dir"] = q.out_dir;
    out += j.dump() + "\n";
  }
  return out;
}

// A point's result for the merge: a result file that is no JSON object (a disk that filled, an
// edit) is an error naming it and the point, not a bare parser message.
Json read_result(const SweepPlan& plan, int id) {
  const std::string path = fmt::format("{}/results/point-{}.json", plan.dir, id);
  const auto bad = [&](const std::string& what) {
    return common::ConfigError(
        path, 0, 0, "",
        fmt::format("the result of point {} {}; remove it and run the point again "
                    "(`scalecast sweep --run-task {} --out {}`)",
                    id, what, id, plan.dir));
  };
  Json r;
  try {
    r = Json::parse(read_file(path));
  } catch (const Json::exception& e) {
    throw bad(fmt::format("is not valid JSON ({})", e.what()));
  }
  if (!r.is_object()) throw bad("is not a JSON object");
  return r;
}

std::vector<std::string> point_sets(const SweepPlan& plan, int combo) {
  std::vector<std::string> sets = plan.overrides;
  sets.insert(sets.end(), plan.combos[combo].begin(), plan.combos[combo].end());
  return sets;
}

std::string combo_dir(const SweepPlan& plan, int combo) {
  return plan.dir + "/" +
         (plan.combos.size() > 1 ? fmt::format("combo-{}", combo) : std::string("points"));
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

}  // namespace

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
  plan.combos = {{}};
  const auto key_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  // `a` is `b` or a key inside it (b.x, b.0): setting b replaces what a set. A list index is a
  // number, so 01 and 1 are one item (the loader reads both as item 1).
  const auto within = [](const std::string& a_key, const std::string& b_key) {
    const std::string a = canonical_key(a_key), b = canonical_key(b_key);
    return a == b || (a.size() > b.size() && a.compare(0, b.size(), b) == 0 && a[b.size()] == '.');
  };
  bool has_one_node = false;
  for (int n : nodes) has_one_node = has_one_node || n == 1;
  // Points of one combination: its node counts, and the 1-GPU and 1-node baselines.
  const std::size_t per_combo = nodes.size() + (llm ? 0 : has_one_node ? 1 : 2);
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
    for (std::size_t k = 0; k < plan.keys.size(); ++k)
      if (within(key, plan.keys[k]) || within(plan.keys[k], key))
        throw common::ConfigError(
            "--axis " + key, 0, 0, "",
            fmt::format("{} is also given by --axis {}; give each key in one --axis with all its "
                        "values (e.g. --axis {}=V1,V2,V3)",
                        key, axes[k], plan.keys[k]));
    for (const std::string& set : overrides)
      if (within(key_of(set), key) || within(key, key_of(set)))
        throw common::ConfigError(
            "--axis " + key, 0, 0, "",
            fmt::format("{} is also given by --set {}; a key is either an axis (its values, one "
                        "per combination) or a --set (one value for every point), not both",
                        key, set));
    plan.keys.push_back(key);
    std::vector<std::string> values, canonical;
    std::stringstream ss(axis.substr(eq + 1));
    for (std::string v; std::getline(ss, v, ',');) {
      // Each value is one combination folder: a repeated one ran twice into it, also when
      // written another way (02 and 2 are one number).
      const std::string c = canonical_value(v);
      const auto it = std::find(canonical.begin(), canonical.end(), c);
      if (it != canonical.end()) {
        const std::string& first = values[static_cast<std::size_t>(it - canonical.begin())];
        throw common::ConfigError(
            "--axis", 0, 0, axis,
            first == v ? "value \"" + v + "\" is listed twice"
                       : fmt::format("values \"{}\" and \"{}\" are one value", first, v));
      }
      values.push_back(v);
      canonical.push_back(c);
    }
    too_many(plan.combos.size() * values.size(), "--axis " + key);
    std::vector<std::vector<std::string>> next;
    for (const auto& c : plan.combos)
      for (const std::string& v : values) {
        auto n = c;
        n.push_back(plan.keys.back() + "=" + v);
        next.push_back(n);
      }
    plan.combos = next;
  }
  for (int c = 0; c < static_cast<int>(plan.combos.size()); ++c) {
    const std::string cdir = combo_dir(plan, c);
    for (int n : nodes)
      plan.points.push_back({static_cast<int>(plan.points.size()), c, n, 0, "point",
                             nodes.size() == 1 ? cdir : cdir + "/nodes-" + std::to_string(n)});
    if (llm) continue;  // an LLM job has one size: no 1-GPU or 1-node baseline
    plan.points.push_back({static_cast<int>(plan.points.size()), c, 1, 1, "one_gpu", ""});
    if (!has_one_node)
      plan.points.push_back({static_cast<int>(plan.points.size()), c, 1, 0, "one_node", ""});
  }
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
    const std::vector<SweepPlan::Input> recorded = inputs_of(old);
    old.erase("inputs");
    if (old.dump(2) != plan_core(plan).dump(2) || read_file(plan.dir + "/points.jsonl") != lines)
      throw common::ConfigError("command line", 0, 0, "--out",
                                plan.dir +
                                    " holds another sweep (its plan.json differs from this one); "
                                    "give another --out, or remove the folder to start afresh");
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
  try {
    const Json j = Json::parse(read_file(path));
    plan.workdir = j.at("workdir").get<std::string>();
    plan.scenario = j.at("scenario").get<std::string>();
    plan.overrides = j.at("overrides").get<std::vector<std::string>>();
    plan.keys = j.at("keys").get<std::vector<std::string>>();
    plan.combos = j.at("combos").get<std::vector<std::vector<std::string>>>();
    plan.nodes = j.at("nodes").get<std::vector<int>>();
    plan.llm = j.value("llm", false);
    plan.inputs = inputs_of(j);
    std::istringstream lines(read_file(plan.dir + "/points.jsonl"));
    for (std::string line; std::getline(lines, line);) {
      const Json p = Json::parse(line);
      plan.points.push_back({p.at("id").get<int>(), p.at("combo").get<int>(),
                             p.at("nodes").get<int>(), p.at("gpus_per_node").get<int>(),
                             p.at("role").get<std::string>(), p.at("out_dir").get<std::string>()});
      if (plan.points.back().id != static_cast<int>(plan.points.size()) - 1 ||
          plan.points.back().combo < 0 ||
          plan.points.back().combo >= static_cast<int>(plan.combos.size()))
        throw std::runtime_error("point " + std::to_string(plan.points.size() - 1) +
                                 " is out of order or names no combination");
    }
  } catch (const std::exception& e) {
    throw common::ConfigError(
        path, 0, 0, "",
        fmt::format("malformed sweep plan: {}; plan the sweep afresh into another --out",
                    e.what()));
  }
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
  if (id < 0 || id >= static_cast<int>(plan.points.size()))
    throw common::ConfigError(
        "--run-task", 0, 0, "",
        fmt::format("expected 0..{} (the sweep in {} has {} points), got {}",
                    plan.points.size() - 1, plan.dir, plan.points.size(), id));
  const PlannedPoint& p = plan.points[id];
  PointJob job{plan.scenario, point_sets(plan, p.combo), p.nodes, p.gpus_per_node, p.out_dir, ""};
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
      if (p.combo == c) points.push_back(read_result(plan, p.id));
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
      const Json r = read_result(plan, p.id);
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
