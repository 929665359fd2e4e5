#pragma once
// How much training a model needs to reach its quality target, as a function of the global batch:
// published convergence results (MLPerf reference convergence points, Goyal et al. 2017) as
// tables of (global batch, epochs or samples) rows, each with its source
// (calibration/data/convergence/convergence.yaml). Time to train = samples to train / simulated
// throughput. Between rows the value is linear in the global batch (MLPerf's RCP checker
// interpolates so); outside the rows it is an error unless extrapolation is asked for, and then it
// is marked.

#include <string>
#include <vector>

namespace scalecast::calibration {

struct ConvergenceRow {
  double global_batch = 0.0;
  double value = 0.0;  // epochs or samples to the target, as the table's unit says
  std::string source;
};

struct ConvergenceTable {
  std::string name;
  std::vector<std::string> models;  // model zoo names the table is for
  bool epochs = true;               // unit: epochs (else samples)
  std::string dataset;
  double dataset_samples = 0.0;  // samples per epoch (> 0 for an epochs table)
  std::string target;
  std::string source;
  std::vector<ConvergenceRow> rows;  // global batch strictly increasing

  bool covers(const std::string& model) const;
};

struct ConvergenceData {
  std::vector<ConvergenceTable> tables;
  // By name; null when absent.
  const ConvergenceTable* find(const std::string& name) const;
  // The first table for a model (the file lists the default first); null when none.
  const ConvergenceTable* for_model(const std::string& model) const;
  std::vector<std::string> names() const;
};

// Loads and validates (format, units, rows sorted by batch, values > 0, a source per row);
// throws common::ConfigError with file:line:col.
ConvergenceData load_convergence(const std::string& path);

struct TrainingAmount {
  double global_batch = 0.0;
  double samples = 0.0;  // samples to the target
  double epochs = 0.0;   // epochs to the target (epochs tables; 0 for a samples table)
  bool extrapolated = false;
};

// Where the batch lies against the table: kInside, or below / above its rows.
enum class Coverage { kInside, kBelow, kAbove };
Coverage coverage(const ConvergenceTable& table, double global_batch);

// Training needed at `global_batch`: a row's value exactly, linear between rows. Outside the rows
// std::out_of_range with a message (the batch, the table's range) unless `extrapolate`: then below
// the table the first row's value, above it the line through the last two rows (one row: its
// value), and `extrapolated` set.
TrainingAmount training_amount(const ConvergenceTable& table, double global_batch,
                               bool extrapolate);

}  // namespace scalecast::calibration
