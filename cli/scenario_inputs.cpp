#include "cli/scenario_inputs.hpp"

#include <fmt/format.h>

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
#include "sim/multi_job_scenario.hpp"

namespace scalecast::cli {
namespace {

namespace fs = std::filesystem;
using common::ConfigError;
using common::ConfigNode;

using platforms::looks_like_path;

std::string absolute(const std::string& p) { return fs::absolute(p).lexically_normal().string(); }

// Where a scenario key is: its place in the file, or the --set that overrode it.
ConfigError key_error(const std::string& scenario_file, const std::vector<std::string>& overrides,
                      const std::string& key, std::optional<std::size_t> index,
                      const std::string& message) {
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it)
    if (it->rfind(key + "=", 0) == 0 || it->rfind(key + ".", 0) == 0)
      return ConfigError("--set " + *it, 0, 0, key, message);
  const ConfigNode root = ConfigNode::load_file(scenario_file);
  if (auto v = root.optional(key)) {
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

sim::Scenario preflight(const std::string& scenario_file,
                        const std::vector<std::string>& overrides) {
  // Outputs are UTF-8; the error points at the byte (column) inside KEY=VALUE, never echoes it.
  for (const std::string& o : overrides) common::check_utf8(o, "--set");
  const sim::Scenario loaded = sim::load_scenario(scenario_file, sim::parse_overrides(overrides));
  const sim::Scenario s = with_resolved_paths(loaded);
  // The platform, the model and GPUs per node are checked by the scenario loader itself, at
  // their keys (sim/scenario.cpp: the platform is loaded there once, the model for the memory
  // check); what it does not read is the calibration databases.
  std::error_code ec;
  // Calibration databases: each must exist and parse (parsed once per process, see
  // database_cache.hpp).
  for (std::size_t i = 0; i < s.calibration.size(); ++i) {
    if (!fs::is_regular_file(s.calibration[i], ec))
      throw key_error(
          scenario_file, overrides, "calibration", i,
          missing_file("calibration database", loaded.calibration[i], s.calibration[i]));
    (void)cached_database(s.calibration[i]);
  }
  // A jobs: scenario's training jobs may name their own databases (jobs[k].calibration).
  if (s.multi) {
    for (std::size_t k = 0; k < s.multi->jobs.size(); ++k) {
      const sim::MixJob& job = s.multi->jobs[k];
      if (job.kind != sim::MixJob::Kind::kTraining) continue;
      const sim::Scenario js = with_resolved_paths(job.scenario);
      for (std::size_t i = 0; i < js.calibration.size(); ++i) {
        if (fs::is_regular_file(js.calibration[i], ec)) {
          (void)cached_database(js.calibration[i]);
          continue;
        }
        const std::string message =
            missing_file("calibration database", job.scenario.calibration[i], js.calibration[i]);
        const std::string key = fmt::format("jobs.{}.calibration", k);
        for (auto it = overrides.rbegin(); it != overrides.rend(); ++it)
          if (it->rfind(key + "=", 0) == 0 || it->rfind(key + ".", 0) == 0)
            throw ConfigError("--set " + *it, 0, 0, fmt::format("jobs[{}].calibration", k),
                              message);
        const ConfigNode root = ConfigNode::load_file(scenario_file);
        const ConfigNode entry = root.required("jobs").items().at(k);
        if (auto v = entry.optional("calibration")) {
          if (v->is_sequence() && i < v->items().size()) v->items()[i].fail(message);
          v->fail(message);
        }
        throw key_error(scenario_file, overrides, "calibration", i, message);
      }
    }
  }
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
