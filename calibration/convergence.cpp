#include "calibration/convergence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "common/config_error.hpp"
#include "common/config_node.hpp"

namespace scalecast::calibration {

using common::ConfigNode;

bool ConvergenceTable::covers(const std::string& model) const {
  return std::find(models.begin(), models.end(), model) != models.end();
}

const ConvergenceTable* ConvergenceData::find(const std::string& name) const {
  for (const ConvergenceTable& t : tables)
    if (t.name == name) return &t;
  return nullptr;
}

const ConvergenceTable* ConvergenceData::for_model(const std::string& model) const {
  for (const ConvergenceTable& t : tables)
    if (t.covers(model)) return &t;
  return nullptr;
}

std::vector<std::string> ConvergenceData::names() const {
  std::vector<std::string> out;
  for (const ConvergenceTable& t : tables) out.push_back(t.name);
  return out;
}

namespace {

constexpr double kMaxBatch = 1e9;
constexpr double kMaxValue = 1e15;

double positive(const ConfigNode& n, double max) {
  const double v = n.as_double();
  if (!(v > 0.0) || !(v <= max))
    n.fail(fmt::format("expected a positive number of at most {:g}, got {}", max, n.as_string()));
  return v;
}

ConvergenceTable load_table(const ConfigNode& n) {
  n.check_keys(
      {"name", "models", "unit", "dataset", "dataset_samples", "target", "source", "rows"});
  ConvergenceTable t;
  t.name = n.required("name").as_string();
  t.models = n.required("models").as_string_list();
  const ConfigNode unit = n.required("unit");
  if (unit.as_string() != "epochs" && unit.as_string() != "samples")
    unit.fail("expected epochs or samples, got \"" + unit.as_string() + "\"");
  t.epochs = unit.as_string() == "epochs";
  t.dataset = n.required("dataset").as_string();
  const ConfigNode samples = n.required("dataset_samples");
  if (t.epochs) {
    t.dataset_samples = positive(samples, kMaxValue);
  } else if (samples.as_double() != 0.0) {
    samples.fail("expected 0 for a samples table (its rows count samples, not epochs)");
  }
  t.target = n.required("target").as_string();
  t.source = n.required("source").as_string();
  const ConfigNode rows = n.required("rows");
  if (!rows.is_sequence() || rows.items().empty()) rows.fail("expected a list of rows");
  for (const ConfigNode& r : rows.items()) {
    r.check_keys({"global_batch", "value", "source"});
    ConvergenceRow row;
    const ConfigNode batch = r.required("global_batch");
    // A batch is whole samples: 1000.5 was accepted and interpolated.
    row.global_batch =
        static_cast<double>(batch.as_int_in(1, static_cast<std::int64_t>(kMaxBatch)));
    row.value = positive(r.required("value"), kMaxValue);
    row.source = r.required("source").as_string();
    if (row.source.empty()) r.required("source").fail("expected a source for the row");
    if (!t.rows.empty() && !(row.global_batch > t.rows.back().global_batch))
      batch.fail(fmt::format("expected a batch above the previous row's {:g} (rows in order)",
                             t.rows.back().global_batch));
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

ConvergenceData load_convergence(const std::string& path) {
  const ConfigNode root = ConfigNode::load_file(path);
  root.check_keys({"format", "tables"});
  const ConfigNode format = root.required("format");
  if (format.as_string() != "scalecast-convergence-1")
    format.fail("expected scalecast-convergence-1, got \"" + format.as_string() + "\"");
  ConvergenceData d;
  for (const ConfigNode& t : root.required("tables").items()) {
    ConvergenceTable table = load_table(t);
    if (d.find(table.name)) t.required("name").fail("expected a name no other table has");
    d.tables.push_back(std::move(table));
  }
  return d;
}

Coverage coverage(const ConvergenceTable& t, double b) {
  if (b < t.rows.front().global_batch) return Coverage::kBelow;
  if (b > t.rows.back().global_batch) return Coverage::kAbove;
  return Coverage::kInside;
}

TrainingAmount training_amount(const ConvergenceTable& t, double b, bool extrapolate) {
  if (t.rows.empty()) throw std::invalid_argument("convergence table " + t.name + " has no rows");
  TrainingAmount a;
  a.global_batch = b;
  const Coverage c = coverage(t, b);
  if (c != Coverage::kInside && !extrapolate)
    throw std::out_of_range(fmt::format(
        "global batch {:g} is {} table {} ({:g} to {:g}: {}); no silent extrapolation: set "
        "time_to_train.extrapolate: true to extend it, or change the batch or node count",
        b, c == Coverage::kBelow ? "below" : "above", t.name, t.rows.front().global_batch,
        t.rows.back().global_batch, t.source));
  double v = 0.0;
  if (c == Coverage::kBelow) {
    v = t.rows.front().value;
  } else if (c == Coverage::kAbove) {
    const std::size_t n = t.rows.size();
    if (n == 1) {
      v = t.rows.back().value;
    } else {
      const ConvergenceRow& p = t.rows[n - 2];
      const ConvergenceRow& q = t.rows[n - 1];
      // The amount of training to a target never falls as the batch grows (Shallue et al.,
      // JMLR 2019: steps to a result fall at most in proportion to the batch, so samples and
      // epochs stay or rise), so a table whose last two rows fall holds its last value instead
      // of following them down, below zero eventually.
      const double slope = (q.value - p.value) / (q.global_batch - p.global_batch);
      v = q.value + std::max(0.0, slope) * (b - q.global_batch);
    }
  } else {
    auto hi =
        std::lower_bound(t.rows.begin(), t.rows.end(), b,
                         [](const ConvergenceRow& r, double x) { return r.global_batch < x; });
    if (hi->global_batch == b) {
      v = hi->value;
    } else {
      const ConvergenceRow& lo = *(hi - 1);
      v = lo.value +
          (hi->value - lo.value) * (b - lo.global_batch) / (hi->global_batch - lo.global_batch);
    }
  }
  a.extrapolated = c != Coverage::kInside;
  if (t.epochs) {
    a.epochs = v;
    a.samples = v * t.dataset_samples;
  } else {
    a.samples = v;
  }
  return a;
}

}  // namespace scalecast::calibration
