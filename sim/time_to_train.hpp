#pragma once
// Time to train next to throughput (scenarios/README.md, "Time to train"): the scenario's
// `time_to_train` key picks a convergence table (calibration/convergence.hpp; by default the
// first for the model in calibration/data/convergence/convergence.yaml), every point's global batch
// must lie in it unless `extrapolate: true` (checked when the scenario loads, at the node count's
// key), and each point gets the samples (and epochs) to the table's target and samples /
// throughput.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibration/convergence.hpp"
#include "platforms/platform.hpp"
#include "sim/scenario.hpp"

namespace scalecast::common {
class ConfigNode;
}

namespace scalecast::sim {

// Reads the `time_to_train` key (true/false, or a map: table, extrapolate, data) into
// s.time_to_train and checks it against the model and s.nodes; throws common::ConfigError.
void load_time_to_train(const common::ConfigNode& key, Scenario& s,
                        const platforms::Platform& machine);

// Every node count's global batch must be in the table (unless extrapolate): a ConfigError at
// `at[i]` (the count's key; one entry, or one per count), naming the table and its range. No-op
// when time_to_train is off.
void check_time_to_train(const Scenario& s, const std::vector<int>& nodes,
                         const std::vector<KeyLocation>& at);

// The scenario's table (loads its data file); throws std::invalid_argument when off.
calibration::ConvergenceTable time_to_train_table(const Scenario& s);

// Adds global_batch, epochs (epochs tables), time_to_train_s and a time_to_train block to a
// point's summary (its gpus, batch_per_gpu and throughput). No-op when time_to_train is off.
void add_time_to_train(const Scenario& s, nlohmann::ordered_json& point);

// The stdout lines under the scaling table ("" when off).
std::string format_time_to_train(const Scenario& s,
                                 const std::vector<nlohmann::ordered_json>& points);

}  // namespace scalecast::sim
