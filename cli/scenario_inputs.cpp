#include "cli/scenario_inputs.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "cli/database_cache.hpp"
#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "common/input_file.hpp"
#include "models/transformer.hpp"
#include "models/zoo.hpp"
#include "platforms/data_dir.hpp"
#include "platforms/platform.hpp"
#include "sim/llm_setup.hpp"
#include "sim/multi_job_scenario.hpp"
#include "sim/variability.hpp"

namespace scalecast::cli {
namespace {

namespace fs = std::filesystem;
using common::ConfigError;
using common::ConfigNode;

using platforms::looks_like_path;

std::string absolute(const std::string& p) { return fs::absolute(p).lexically_normal().string(); }

// Where a scenario key is: the --set that overrode it, else its place in the file. With `job`,
// the key of that entry of `jobs` (jobs.K.key / jobs[K].key), or the file's top-level key the
// job inherited when its entry has none.
ConfigError key_error(const std::string& scenario_file, const std::vector<std::string>& overrides,
                      const std::string& key, std::optional<std::size_t> index,
                      const std::string& message, std::optional<std::size_t> job = std::nullopt) {
  const std::string set_key = job ? fmt::format("jobs.{}.{}", *job, key) : key;
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it)
    if (it->rfind(set_key + "=", 0) == 0 || it->rfind(set_key + ".", 0) == 0)
      return ConfigError("--set " + *it, 0, 0, job ? fmt::format("jobs[{}].{}", *job, key) : key,
                         message);
  const ConfigNode root = ConfigNode::load_file(scenario_file);
  std::optional<ConfigNode> v;
  if (job) v = root.required("jobs").items().at(*job).optional(key);
  if (!v) v = root.optional(key);
  if (v) {
    if (index && v->is_sequence() && *index < v->items().size()) {
      const ConfigNode item = v->items()[*index];
      return ConfigError(item.file(), item.line(), item.column(), item.path(), message);
    }
    return ConfigError(v->file(), v->line(), v->column(), v->path(), message);
  }
  return ConfigError(scenario_file, 0, 0, key, message);
}

// The GPU catalog a platform file names (key gpu_catalog, default gpus.yaml), found as the
// platform loader finds it: next to the platform file, else in platforms/ of the data dirs.
std::string gpu_catalog_path(const std::string& platform_file) {
  const ConfigNode root = ConfigNode::load_file(platform_file);
  std::string rel = root.string_or("gpu_catalog", "gpus.yaml");
  fs::path p =
      fs::path(rel).is_absolute() ? fs::path(rel) : fs::path(platform_file).parent_path() / rel;
  std::error_code ec;
  if (fs::is_regular_file(p, ec)) return absolute(p.string());
  const std::string found = platforms::find_data_file("platforms/" + rel);
  return found.empty() ? "" : absolute(found);
}

std::string missing_file(const std::string& what, const std::string& ref,
                         const std::string& resolved) {
  std::error_code ec;
  if (fs::exists(resolved, ec))
    return fmt::format("expected a {} file, '{}' is not a regular file", what, ref);
  return fmt::format(
      "no {} file '{}' (looked in the working directory, next to the scenario and in the data "
      "directories)",
      what, ref);
}

}  // namespace

std::string resolve_input_path(const std::string& ref, const std::string& scenario_file) {
  return platforms::resolve_reference(ref, scenario_file);
}

sim::Scenario with_resolved_paths(sim::Scenario s) {
  if (looks_like_path(s.platform)) s.platform = resolve_input_path(s.platform, s.source_file);
  if (looks_like_path(s.model)) s.model = resolve_input_path(s.model, s.source_file);
  for (std::string& db : s.calibration) db = resolve_input_path(db, s.source_file);
  return s;
}

std::vector<InputFile> scenario_input_files(const std::string& scenario_file,
                                            const std::vector<std::string>& overrides) {
  const sim::Scenario s =
      with_resolved_paths(sim::load_scenario(scenario_file, sim::parse_overrides(overrides)));
  std::vector<InputFile> files{{"scenario", absolute(scenario_file)}};
  const platforms::Platform machine = platforms::load_platform(s.platform);
  files.push_back({"platform", absolute(machine.file.empty() ? s.platform : machine.file)});
  if (const std::string catalog = gpu_catalog_path(files.back().path); !catalog.empty())
    files.push_back({"gpu catalog", catalog});
  if (looks_like_path(s.model)) files.push_back({"model", absolute(s.model)});
  for (const std::string& db : s.calibration) files.push_back({"calibration", absolute(db)});
  return files;
}

std::string file_fingerprint(const std::string& path) {
  const std::string text = common::read_input_file(path, std::numeric_limits<std::uint64_t>::max());
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

void warn_slow_flow_points(const sim::Scenario& s, const std::vector<int>& nodes,
                           int gpus_per_node) {
  if (s.multi) {
    // Each training job of a mix, as the point it would be alone, its warnings named.
    for (const sim::MixJob& j : s.multi->jobs)
      if (j.kind == sim::MixJob::Kind::kTraining)
        warn_slow_flow_points(j.scenario, {j.nodes}, j.scenario.gpus_per_node, j.name);
    return;
  }
  warn_slow_flow_points(s, nodes, gpus_per_node, "");
}

void warn_slow_flow_points(const sim::Scenario& s, const std::vector<int>& nodes, int gpus_per_node,
                           const std::string& job) {
  const std::string who = job.empty() ? "" : fmt::format("job '{}': ", job);
  if (s.llm) {
    // An LLM point's cost is its micro-batches x blocks x stages and its DP rings
    // (sim::estimate_llm_work); one it refuses outright failed at load.
    const sim::Variability v{s.compute_noise_cv, s.straggler_fraction, s.straggler_slowdown, 0};
    const int replicas = v.varied() ? s.llm->parallel.dp : 1;
    const std::string slow = sim::llm_cost_warning(
        sim::estimate_llm_work(*s.llm, gpus_per_node, replicas), s.warmup + s.iterations);
    if (!slow.empty()) spdlog::warn("{}{}", who, slow);
    return;
  }
  for (int n : nodes) {
    const std::string slow = sim::flow_cost_warning(s.fidelity, s.flow_limit_gpus,
                                                    s.allreduce.algorithm, n, gpus_per_node);
    if (!slow.empty()) spdlog::warn("{}{}", who, slow);
  }
}

sim::Scenario preflight(const std::string& scenario_file,
                        const std::vector<std::string>& overrides) {
  // Outputs are UTF-8; the error points at the byte (column) inside KEY=VALUE, never echoes it.
  for (const std::string& o : overrides) common::check_utf8(o, "--set");
  const sim::Scenario loaded = sim::load_scenario(scenario_file, sim::parse_overrides(overrides));
  // The platform, the model and GPUs per node are checked by the scenario loader itself, at
  // their keys (sim/scenario.cpp: the platform is loaded there once, the model for the memory
  // check); what it does not read is the calibration databases: each must exist and parse
  // (parsed once per process, see database_cache.hpp), the file's and a training job's own
  // (jobs[k].calibration).
  const auto check_databases = [&](const sim::Scenario& given, std::optional<std::size_t> job) {
    const sim::Scenario resolved = with_resolved_paths(given);
    std::error_code ec;
    for (std::size_t i = 0; i < resolved.calibration.size(); ++i) {
      if (!fs::is_regular_file(resolved.calibration[i], ec))
        throw key_error(
            scenario_file, overrides, "calibration", i,
            missing_file("calibration database", given.calibration[i], resolved.calibration[i]),
            job);
      (void)cached_database(resolved.calibration[i]);
    }
  };
  check_databases(loaded, std::nullopt);
  if (loaded.multi)
    for (std::size_t k = 0; k < loaded.multi->jobs.size(); ++k)
      if (loaded.multi->jobs[k].kind == sim::MixJob::Kind::kTraining)
        check_databases(loaded.multi->jobs[k].scenario, k);
  return loaded;
}

void preflight_validation_file(const std::string& path, const std::vector<std::string>& systems,
                               const std::vector<std::string>& models,
                               const std::vector<int>& gpus_per_node) {
  const ConfigNode root = ConfigNode::load_file(path);
  const std::vector<ConfigNode> points = root.required("points").items();
  std::map<std::string, int> smallest_node;  // platform -> GPUs of its smallest node
  std::set<std::string> models_ok;
  for (std::size_t i = 0; i < systems.size() && i < points.size(); ++i) {
    if (systems[i].empty()) continue;  // a point validate skips (FORMAT.md 5.4)
    const ConfigNode system = points[i].required("system");
    auto it = smallest_node.find(systems[i]);
    if (it == smallest_node.end()) {
      platforms::Platform machine;
      try {
        machine = platforms::load_platform(systems[i]);
      } catch (const ConfigError& e) {
        if (e.line() == 0) system.fail(e.message());  // the name, not the platform file
        throw;
      }
      int smallest = std::numeric_limits<int>::max();
      for (const platforms::Partition& p : machine.partitions)
        smallest = std::min(smallest, machine.node_types.at(p.node_type).gpu_count);
      it = smallest_node.emplace(systems[i], smallest).first;
    }
    if (gpus_per_node[i] > it->second)
      points[i].required("gpus").fail(
          fmt::format("expected at most {} GPUs per node on {} (gpus / nodes = {})", it->second,
                      systems[i], gpus_per_node[i]));
    if (models_ok.insert(models[i]).second) {
      const ConfigNode model = points[i].required("model");
      try {
        // A transformer of the LLM zoo (parallel points) or a layer-graph model.
        if (!models::load_transformer(models[i])) (void)models::load_model(models[i]);
      } catch (const ConfigError& e) {
        if (e.line() == 0) model.fail(e.message());
        throw;
      } catch (const std::invalid_argument& e) {
        model.fail(e.what());
      }
    }
  }
}

}  // namespace scalecast::cli
