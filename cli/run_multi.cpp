#include "cli/run_multi.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "calibration/calibrated_cost_model.hpp"
#include "cli/commands.hpp"
#include "cli/database_cache.hpp"
#include "cli/point_runner.hpp"
#include "cli/scenario_inputs.hpp"
#include "common/atomic_file.hpp"
#include "common/config_error.hpp"
#include "common/units.hpp"
#include "common/version.hpp"
#include "sim/llm_outputs.hpp"
#include "sim/multi_job_scenario.hpp"
#include "sim/outputs.hpp"
#include "sim/simgrid_info.hpp"

namespace scalecast::cli {
namespace {

using nlohmann::ordered_json;

// A job's JSON as the mix's point wrote it, with its place and start.
ordered_json training_json(const sim::MixJob& job, const sim::JobResult& r) {
  ordered_json j;
  j["name"] = job.name;
  j["kind"] = "training";
  j["model"] = job.scenario.model;
  if (const std::int64_t seq = sim::effective_seq_len(job.scenario); seq > 0) j["seq_len"] = seq;
  j["precision"] = std::string(common::to_string(job.scenario.precision));
  j["start_s"] = job.start_s;
  j["node_list"] = job.node_list;
  ordered_json p = sim::point_json(job.scenario, r);
  p.erase("scaling_efficiency");  // a job of a mix has no 1-GPU baseline here
  for (const auto& [k, v] : p.items()) j[k] = v;
  return j;
}

// An LLM job's JSON as a single LLM run writes it (sim/llm_outputs.hpp), with its place and start.
ordered_json llm_json(const sim::MixJob& job, const sim::LlmPointResult& r) {
  ordered_json j;
  j["name"] = job.name;
  j["kind"] = "training";
  j["start_s"] = job.start_s;
  j["node_list"] = job.node_list;
  const ordered_json p = sim::llm_point_json(job.scenario, r);
  for (const auto& [k, v] : p.items()) j[k] = v;
  return j;
}

ordered_json io_json(const sim::MixJob& job, const sim::IoJobResult& r) {
  // A job without a duration reads until the training jobs end (end_s): its duration_s is null,
  // not 0 (it printed 0.0, a job that read nothing).
  const ordered_json duration =
      job.duration_s > 0.0 ? ordered_json(job.duration_s) : ordered_json(nullptr);
  return {{"name", job.name},
          {"kind", "io"},
          {"start_s", job.start_s},
          {"node_list", job.node_list},
          {"nodes", r.nodes},
          {"request_bytes", job.request_bytes},
          {"duration_s", duration},
          {"end_s", r.end_s},
          {"bytes_read", r.bytes_read},
          {"requested_rate_Bps", r.requested_rate_Bps},
          {"achieved_rate_Bps", r.achieved_rate_Bps}};
}

std::string table(const sim::Scenario& s, const ordered_json& jobs) {
  std::string o = fmt::format("{} — {} jobs on {} ({} placement, {} nodes)\n", s.name, jobs.size(),
                              s.platform, to_string(s.multi->placement), s.multi->machine_nodes);
  o += fmt::format("{:<16} {:>8} {:>6} {:>6} {:>9} {:>10} {:>10} {:>9} {:>13}\n", "job", "kind",
                   "nodes", "gpus", "start_s", "iter_ms", "alone_ms", "slowdown", "samples/s");
  for (const ordered_json& j : jobs) {
    if (j["kind"] == "io") {
      // In a unit that fits each rate: a job asking 1 B/s printed "read 0.00 of 0.00 GB/s".
      const auto rate = [](double Bps) {
        return common::format_quantity(Bps, common::Quantity::kBandwidth);
      };
      o += fmt::format(
          "{:<16} {:>8} {:>6} {:>6} {:>9.3f} {:>10} {:>10} {:>9} {:>13}  read {} of {} asked\n",
          j["name"].get<std::string>(), "io", j["nodes"].get<int>(), "-",
          j["start_s"].get<double>(), "-", "-", "-", "-",
          rate(j["achieved_rate_Bps"].get<double>()), rate(j["requested_rate_Bps"].get<double>()));
      continue;
    }
    o += fmt::format("{:<16} {:>8} {:>6} {:>6} {:>9.3f} {:>10.2f} {:>10.2f} {:>9.3f} {:>13.1f}\n",
                     j["name"].get<std::string>(), "training", j["nodes"].get<int>(),
                     j["gpus"].get<int>(), j["start_s"].get<double>(),
                     1e3 * j["iteration_time_s"].get<double>(),
                     1e3 * j["alone"]["iteration_time_s"].get<double>(),
                     j["slowdown"].get<double>(), j["throughput_samples_per_s"].get<double>());
  }
  return o;
}

// One timeline of the whole mix: every training job's trace.json (written by the mix's point into
// out_dir/jobs/NAME/) with its processes renumbered after the previous job's and named
// "JOB: ...", so Perfetto shows the jobs' overlap on one time axis (all in simulated time).
void write_mix_trace(const std::string& out_dir, const std::vector<std::string>& jobs) {
  ordered_json events = ordered_json::array();
  int base = 0;
  for (const std::string& name : jobs) {
    const std::filesystem::path file =
        std::filesystem::path(out_dir) / sim::job_folder(name) / "trace.json";
    std::ifstream in(file);
    if (!in) throw std::runtime_error("cannot read " + file.string() + " to merge the mix's trace");
    ordered_json t = ordered_json::parse(in);
    int top = -1;
    for (ordered_json& e : t.at("traceEvents")) {
      const int pid = e.value("pid", 0);
      top = std::max(top, pid);
      e["pid"] = base + pid;
      if (e.value("name", "") == "process_name" && e.contains("args"))
        e["args"]["name"] = name + ": " + e["args"].value("name", "");
      events.push_back(std::move(e));
    }
    base += top + 1;
  }
  const ordered_json out = {{"displayTimeUnit", "ns"}, {"traceEvents", std::move(events)}};
  common::write_file_atomic(out_dir + "/trace.json", out.dump() + "\n");
}

// An override's key as error paths spell it: jobs.1.start -> jobs[1].start.
std::string override_path(const std::string& key) {
  std::string out;
  std::size_t start = 0;
  while (start <= key.size()) {
    const std::size_t dot = std::min(key.find('.', start), key.size());
    const std::string part = key.substr(start, dot - start);
    const bool index = !part.empty() && std::all_of(part.begin(), part.end(),
                                                    [](char c) { return c >= '0' && c <= '9'; });
    out += index ? "[" + part + "]" : (out.empty() ? "" : ".") + part;
    start = dot + 1;
  }
  return out;
}

// run_mix's errors found in the simulation (an I/O job that starts after the training jobs
// ended) name the --set that gave the key, as the loader's do: a value an override set has no
// line in the scenario file.
sim::MixResult run_mix_at_overrides(const sim::Scenario& s, int which,
                                    const sim::MixPricing& pricing,
                                    const std::vector<std::string>& overrides) {
  try {
    return sim::run_mix(s, which, pricing);
  } catch (const common::ConfigError& e) {
    for (std::size_t i = overrides.size(); i-- > 0;) {
      const std::size_t eq = overrides[i].find('=');
      if (eq == std::string::npos) continue;
      const std::string path = override_path(overrides[i].substr(0, eq));
      const std::string& k = e.key_path();
      if (k == path || (k.size() > path.size() && k.compare(0, path.size(), path) == 0 &&
                        (k[path.size()] == '.' || k[path.size()] == '[')))
        throw common::ConfigError("--set " + overrides[i], 0, 0, k, e.message());
    }
    throw;
  }
}

}  // namespace

int run_multi_point(const std::string& scenario, const std::vector<std::string>& overrides,
                    int which, const std::string& json_path, const std::string& point_dir) {
  const sim::Scenario s = with_resolved_paths(preflight(scenario, overrides));
  const sim::MultiJobSpec& m = *s.multi;
  // Each job priced with its own calibration databases and framework efficiency.
  std::vector<calibration::Database> dbs(m.jobs.size());
  std::vector<std::unique_ptr<calibration::CostModel>> models(m.jobs.size());
  sim::MixPricing pricing;
  for (std::size_t k = 0; k < m.jobs.size(); ++k) {
    if (m.jobs[k].kind == sim::MixJob::Kind::kTraining) {
      const sim::Scenario js = with_resolved_paths(m.jobs[k].scenario);
      for (const std::string& path : js.calibration) dbs[k].merge(cached_database(path));
      calibration::CostModelOptions options;
      options.framework_efficiency = js.framework_efficiency;
      models[k] = std::make_unique<calibration::CalibratedCostModel>(dbs[k], options);
    }
    pricing.cost.push_back(models[k].get());
    pricing.db.push_back(models[k] ? &dbs[k] : nullptr);
  }
  const sim::MixResult r = run_mix_at_overrides(s, which, pricing, overrides);
  ordered_json out;
  // Training jobs in the file's order, data-parallel and LLM alike.
  out["training"] = ordered_json::array();
  std::size_t dp = 0, llm = 0;
  for (std::size_t k = 0; k < m.jobs.size(); ++k) {
    const sim::MixJob& job = m.jobs[k];
    const std::string dir =
        which < 0 && !point_dir.empty() ? point_dir + "/" + sim::job_folder(job.name) : "";
    if (dp < r.job_index.size() && r.job_index[dp] == static_cast<int>(k)) {
      out["training"].push_back(training_json(job, r.training[dp]));
      if (!dir.empty()) sim::write_point_files(dir, r.training[dp]);
      ++dp;
    } else if (llm < r.llm_index.size() && r.llm_index[llm] == static_cast<int>(k)) {
      out["training"].push_back(llm_json(job, r.llm[llm]));
      if (!dir.empty()) sim::write_llm_point_files(dir, r.llm[llm]);
      ++llm;
    }
  }
  out["io"] = ordered_json::array();
  for (std::size_t i = 0; i < r.io.size(); ++i)
    out["io"].push_back(io_json(m.jobs[r.io_index[i]], r.io[i]));
  common::write_file_atomic(json_path, out.dump() + "\n");
  return kExitOk;
}

int run_multi_scenario(const sim::Scenario& s, const std::string& scenario,
                       const std::vector<std::string>& overrides, const std::string& out_dir,
                       int jobs, bool progress) {
  const sim::MultiJobSpec& m = *s.multi;
  // Point 0: every job together; then each training job alone on the same nodes.
  std::vector<PointJob> points;
  points.push_back({scenario, overrides, 1, 0, out_dir, "", {"--multi-job", "-1"}});
  const std::vector<int> training = m.training();
  for (int k : training)
    points.push_back({scenario, overrides, 1, 0, "", "", {"--multi-job", std::to_string(k)}});
  const std::vector<ordered_json> res = run_points(points, jobs, progress);
  // Jobs in the file's order; a training job gets its alone run and its slowdown.
  ordered_json all = ordered_json::array();
  std::size_t t = 0, io = 0;
  for (std::size_t k = 0; k < m.jobs.size(); ++k) {
    if (m.jobs[k].kind == sim::MixJob::Kind::kIo) {
      all.push_back(res[0]["io"][io++]);
      continue;
    }
    ordered_json j = res[0]["training"][t];
    const ordered_json& alone = res[1 + t]["training"][0];
    ++t;
    const double together = j["iteration_time_s"].get<double>();
    const double by_itself = alone["iteration_time_s"].get<double>();
    j["alone"] = {{"iteration_time_s", by_itself},
                  {"throughput_samples_per_s", alone["throughput_samples_per_s"]},
                  {"breakdown", alone["breakdown"]}};
    j["slowdown"] = by_itself > 0.0 ? together / by_itself : 0.0;
    all.push_back(std::move(j));
  }
  std::fputs(table(s, all).c_str(), stdout);
  std::fflush(stdout);
  if (!out_dir.empty()) {
    ordered_json j;
    j["scenario"] = s.name;
    j["platform"] = s.platform;
    j["machine_nodes"] = m.machine_nodes;
    j["placement"] = to_string(m.placement);
    j["seed"] = m.seed;
    j["jobs"] = all;
    j["tool"] = {{"version", common::kVersion},
                 {"git", common::kGitHash},
                 {"simgrid", sim::simgrid_version()}};
    common::write_file_atomic(out_dir + "/summary.json", j.dump(2) + "\n");
    common::write_file_atomic(out_dir + "/scenario.resolved.yaml", s.resolved_yaml);
    std::vector<std::string> names;
    for (int k : training) names.push_back(m.jobs[static_cast<std::size_t>(k)].name);
    write_mix_trace(out_dir, names);
  }
  return kExitOk;
}

}  // namespace scalecast::cli
