#include "sim/time_to_train.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "platforms/data_dir.hpp"

namespace scalecast::sim {

using common::ConfigError;
using nlohmann::ordered_json;

namespace {

constexpr const char* kDefaultData = "calibration/data/convergence/convergence.yaml";

// GPUs per node of a point: the scenario's, else the node's when every node type has the same.
int node_gpus(const Scenario& s, const platforms::Platform& machine) {
  if (s.gpus_per_node > 0) return s.gpus_per_node;
  int g = 0;
  for (const platforms::Partition& p : machine.partitions) {
    const int c = machine.node_types.at(p.node_type).gpu_count;
    if (g != 0 && c != g) return 0;
    g = c;
  }
  return g;
}

}  // namespace

void load_time_to_train(const common::ConfigNode& key, Scenario& s,
                        const platforms::Platform& machine) {
  TimeToTrainSpec& t = s.time_to_train;
  t.at = {key.file(), key.line(), key.column(), key.path()};
  std::string data_ref;
  if (key.is_scalar()) {
    t.enabled = key.as_bool();
  } else {
    if (!key.is_map()) key.fail("expected true, false or a map with table, extrapolate, data");
    key.check_keys({"table", "extrapolate", "data"});
    t.enabled = true;
    t.table = key.string_or("table", "");
    t.extrapolate = key.bool_or("extrapolate", false);
    data_ref = key.string_or("data", "");
  }
  if (!t.enabled) return;
  t.data_file = data_ref.empty() ? platforms::find_data_file(kDefaultData)
                                 : platforms::resolve_reference(data_ref, s.source_file);
  const common::ConfigNode at = key.is_map() && key.has("data") ? key.required("data") : key;
  if (t.data_file.empty())
    at.fail(std::string("no convergence data: ") + kDefaultData +
            " is not in the data directories (set SCALECAST_DATA_DIR)");
  calibration::ConvergenceData data;
  try {
    data = calibration::load_convergence(t.data_file);
  } catch (const ConfigError& e) {
    if (e.line() > 0) throw;
    at.fail(e.message());
  }
  const common::ConfigNode table_at =
      key.is_map() && key.has("table") ? key.required("table") : key;
  const calibration::ConvergenceTable* table =
      t.table.empty() ? data.for_model(s.model) : data.find(t.table);
  if (!table) {
    std::string names;
    for (const std::string& n : data.names()) names += (names.empty() ? "" : ", ") + n;
    table_at.fail(
        t.table.empty()
            ? fmt::format("no convergence table for model {} in {} (tables: {})", s.model,
                          t.data_file, names)
            : fmt::format("no table \"{}\" in {} (tables: {})", t.table, t.data_file, names));
  }
  if (!table->covers(s.model)) {
    std::string models;
    for (const std::string& m : table->models) models += (models.empty() ? "" : ", ") + m;
    table_at.fail(fmt::format("table {} is for {}, not {}", table->name, models, s.model));
  }
  t.table = table->name;
  if (node_gpus(s, machine) == 0)
    key.fail("expected gpus_per_node with time_to_train on " + machine.name +
             ", whose node types differ in GPU count (the global batch needs it)");
  check_time_to_train(s, s.nodes, s.nodes_at);
}

calibration::ConvergenceTable time_to_train_table(const Scenario& s) {
  if (!s.time_to_train.enabled) throw std::invalid_argument("time_to_train is off");
  const calibration::ConvergenceData data =
      calibration::load_convergence(s.time_to_train.data_file);
  const calibration::ConvergenceTable* t = data.find(s.time_to_train.table);
  if (!t) throw std::invalid_argument("no convergence table " + s.time_to_train.table);
  return *t;
}

void check_time_to_train(const Scenario& s, const std::vector<int>& nodes,
                         const std::vector<KeyLocation>& at) {
  if (!s.time_to_train.enabled || s.time_to_train.extrapolate) return;
  const calibration::ConvergenceTable table = time_to_train_table(s);
  const int gpus = node_gpus(s, platforms::load_platform(s.platform));
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const double batch = static_cast<double>(nodes[i]) * gpus * s.batch_per_gpu * s.accumulation;
    if (calibration::coverage(table, batch) == calibration::Coverage::kInside) continue;
    const KeyLocation& where = at.empty() ? s.time_to_train.at : at[std::min(i, at.size() - 1)];
    std::string why;
    try {
      calibration::training_amount(table, batch, false);
    } catch (const std::out_of_range& e) {
      why = e.what();
    }
    throw ConfigError(
        where.file, where.line, where.column, where.key,
        fmt::format(
            "{} node{} x {} GPUs x batch {}{}: {}", nodes[i], nodes[i] == 1 ? "" : "s", gpus,
            s.batch_per_gpu,
            s.accumulation > 1 ? fmt::format(" x {} micro-batches", s.accumulation) : std::string(),
            why));
  }
}

void add_time_to_train(const Scenario& s, ordered_json& point) {
  if (!s.time_to_train.enabled) return;
  const calibration::ConvergenceTable table = time_to_train_table(s);
  const double batch = point.at("gpus").get<double>() * point.at("batch_per_gpu").get<double>();
  const calibration::TrainingAmount a =
      calibration::training_amount(table, batch, s.time_to_train.extrapolate);
  const double tput = point.at("throughput_samples_per_s").get<double>();
  if (!(tput > 0.0))
    throw std::runtime_error("time to train: the point's throughput is " + std::to_string(tput));
  point["global_batch"] = batch;
  if (table.epochs) point["epochs"] = a.epochs;
  point["time_to_train_s"] = a.samples / tput;
  ordered_json block = {
      {"table", table.name},           {"unit", table.epochs ? "epochs" : "samples"},
      {"target", table.target},        {"dataset", table.dataset},
      {"samples_to_train", a.samples}, {"extrapolated", a.extrapolated},
      {"source", table.source}};
  if (table.epochs) block["dataset_samples"] = table.dataset_samples;
  point["time_to_train"] = block;
}

std::string format_time_to_train(const Scenario& s, const std::vector<ordered_json>& points) {
  if (!s.time_to_train.enabled) return "";
  const calibration::ConvergenceTable table = time_to_train_table(s);
  std::string o = fmt::format("time to train to {} ({}; {})\n", table.target, table.name,
                              table.epochs ? "epochs by global batch" : "samples by global batch");
  o += fmt::format("{:>6} {:>12} {:>10} {:>16} {:>15}\n", "nodes", "global_batch", "epochs",
                   "samples", "time_to_train_h");
  bool any_extrapolated = false;
  for (const ordered_json& p : points) {
    if (!p.contains("time_to_train_s")) continue;
    const bool ex = p["time_to_train"]["extrapolated"].get<bool>();
    any_extrapolated = any_extrapolated || ex;
    o += fmt::format(
        "{:>6} {:>12.0f} {:>10} {:>16.0f} {:>15.3f}{}\n", p["nodes"].get<int>(),
        p["global_batch"].get<double>(),
        p.contains("epochs") ? fmt::format("{:.2f}", p["epochs"].get<double>()) : std::string("-"),
        p["time_to_train"]["samples_to_train"].get<double>(),
        p["time_to_train_s"].get<double>() / 3600.0, ex ? "  (extrapolated)" : "");
  }
  if (any_extrapolated)
    o += "(extrapolated: outside the table's batches, asked for by time_to_train.extrapolate)\n";
  return o;
}

}  // namespace scalecast::sim
