// The merge half of a sweep folder (cli/sweep_plan.hpp): each point's result checked against its
// planned point, then per combination the tables, summary.json, and sweep.csv.

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "cli/sweep_internal.hpp"
#include "common/atomic_file.hpp"
#include "common/config_error.hpp"
#include "common/input_file.hpp"
#include "sim/llm_outputs.hpp"
#include "sim/outputs.hpp"
#include "sim/scenario.hpp"
#include "sim/time_to_train.hpp"

namespace scalecast::cli {

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

std::string result_path(const SweepPlan& plan, int id) {
  return fmt::format("{}/results/point-{}.json", plan.dir, id);
}

std::vector<int> missing_points(const SweepPlan& plan) {
  std::vector<int> ids;
  for (const PlannedPoint& p : plan.points)
    if (!fs::exists(result_path(plan, p.id))) ids.push_back(p.id);
  return ids;
}

namespace {

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
