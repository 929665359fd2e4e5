#pragma once
// The real side of the validation seams: every simulation is a `scalecast run` child process
// (SimGrid allows one engine per process), given a scenario written from the Configuration and
// read back through its summary.json (throughput, iteration time, breakdown) or trace.json
// (Chrome trace format, read by the same reader as measured traces).

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "validation/predictor.hpp"
#include "validation/sim_server.hpp"
#include "validation/trace_comparison.hpp"
#include "validation/trace_reader.hpp"
#include "validation/validation_file.hpp"

namespace scalecast::validation {

// The scenario YAML that asks `scalecast run` for `config` (scenarios/README.md format), priced
// with the given calibration databases (absolute paths, first wins).
std::string scenario_yaml(const Configuration& config,
                          const std::vector<std::string>& calibration = {});

// Throws Unsupported when a scenario cannot express `config`: an unknown model, a seq_len for a
// model that does not read token sequences or beyond its position table, comm mpi_cpu or tcp.
// RunPredictor::predict calls it before writing the scenario.
void check_expressible(const Configuration& config);

// Before any simulation: every point's node count must be one its system's topology rule can
// build (platforms::node_count_problem; the machine grows to the point, sim/cluster.hpp).
// Throws common::ConfigError at the point's `nodes` key. A system that does not load is left
// to the point's own simulation, which lists it as skipped.
void check_node_counts(const ValidationFile& file);

// Before any simulation: marks each point that cannot be simulated (FORMAT.md section 5.4: no
// platform of that name, unknown model; for a parallel point, a model that is not a transformer
// of the LLM zoo; a seq_len the model cannot take) with the reason at its `system`, `model` or
// `seq_len` key (ValidationPoint::unsimulatable);
// the protocol lists it as skipped and the other points still run. A platform or model file
// with a fault at a line of its own is left to the caller's checks (an input error).
void mark_unsimulatable(ValidationFile& file);

// Creates the folder the simulations are kept in (`option`: --work-dir), before any simulation:
// throws common::ConfigError "OPTION: error: DIR: REASON" when it is a file or cannot be created
// (a path through a regular file let every point fail, exit 4).
void create_work_dir(const std::string& option, const std::string& dir);

// The project's kernel calibration databases (calibration/data/*.yaml in the first data
// directory that has the folder), sorted by name; kernel-level data, not from a validation file.
std::vector<std::string> default_calibration_databases();

// Reads a replay summary.json (text in memory; `name` for messages).
Prediction parse_summary_json(const std::string& text, const std::string& name);

// Runs argv[0] with arguments, capturing stdout and stderr together; returns the exit status
// (128 + the signal for a child killed by one).
int run_process(const std::vector<std::string>& argv, std::string& output);

class RunPredictor : public Predictor {
 public:
  // `scalecast_exe`: the scalecast executable; `work_dir`: where scenarios and outputs go;
  // `calibration`: databases every scenario is priced with.
  RunPredictor(std::string scalecast_exe, std::string work_dir,
               std::vector<std::string> calibration = default_calibration_databases());

  // Exit status 1 (input rejected) of the child becomes Unsupported with the child's first error
  // line; any other failure is a std::runtime_error.
  Prediction predict(const Configuration& config) const override;

  int simulations_run() const { return runs_; }

  // On (the default): simulations are forked from `scalecast sim-server` processes (one per
  // concurrent caller, databases preloaded) instead of each starting `scalecast` afresh; same
  // command line, same results, without the per-process start-up. Off: a fresh process each.
  void use_servers(bool on) { use_servers_ = on; }

 private:
  // The child's exit status; its stdout and stderr are in `output`.
  int run_child(const std::vector<std::string>& argv, const std::string& output_path,
                std::string& output) const;

  std::string exe_;
  std::string work_dir_;
  std::vector<std::string> calibration_;
  mutable std::atomic<bool> use_servers_{true};  // set off for good when a server fails
  mutable std::mutex mutex_;
  mutable std::map<std::string, Prediction> cache_;  // by scenario text
  mutable int runs_ = 0;
  mutable std::vector<std::unique_ptr<SimServer>> idle_servers_;  // guarded by mutex_
  mutable int servers_started_ = 0;
};

class RunScenarioSimulator : public ScenarioSimulator {
 public:
  RunScenarioSimulator(std::string scalecast_exe, std::string work_dir, TraceReadOptions options);
  Trace simulate(const std::string& scenario_path) const override;

 private:
  std::string exe_;
  std::string work_dir_;
  TraceReadOptions options_;
};

}  // namespace scalecast::validation
