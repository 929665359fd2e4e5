#include "calibration/database.hpp"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

namespace scalecast::calibration {

void Database::add_source(const Source& source) {
  if (source.id.empty()) throw std::invalid_argument("calibration: a source needs an id");
  const auto it = sources_.find(source.id);
  if (it != sources_.end() && !(it->second == source))
    throw std::invalid_argument(fmt::format(
        "calibration: source id '{}' already exists with different provenance", source.id));
  sources_[source.id] = source;
}

bool Database::put(const Measurement& m) {
  if (!sources_.count(m.source))
    throw std::invalid_argument(fmt::format("calibration: measurement {} names unknown source '{}'",
                                            m.key.signature(), m.source));
  if (!(m.median_s > 0) || !(m.min_s > 0))
    throw std::invalid_argument(
        fmt::format("calibration: measurement {} needs positive times", m.key.signature()));
  const bool replaced = rows_.count(m.key) > 0;
  rows_[m.key] = m;
  return replaced;
}

const Measurement* Database::find(const MeasurementKey& key) const {
  const auto it = rows_.find(key);
  return it == rows_.end() ? nullptr : &it->second;
}

const Source* Database::source(const std::string& id) const {
  const auto it = sources_.find(id);
  return it == sources_.end() ? nullptr : &it->second;
}

std::vector<const Measurement*> Database::measurements() const {
  std::vector<const Measurement*> out;
  out.reserve(rows_.size());
  for (const auto& [key, m] : rows_) out.push_back(&m);
  return out;
}

std::vector<std::string> Database::devices() const {
  std::set<std::string> d;
  for (const auto& [key, m] : rows_) d.insert(key.device);
  return {d.begin(), d.end()};
}

MergeReport Database::merge(const Database& other) {
  for (const auto& [id, s] : other.sources_) add_source(s);
  MergeReport report;
  for (const auto& [key, m] : other.rows_) {
    const auto it = rows_.find(key);
    if (it == rows_.end()) {
      rows_[key] = m;
      ++report.added;
      continue;
    }
    const std::string& mine = sources_.at(it->second.source).date;
    const std::string& theirs = sources_.at(m.source).date;
    if (theirs >= mine) {
      it->second = m;
      ++report.replaced;
    } else {
      ++report.kept;
    }
  }
  return report;
}

}  // namespace scalecast::calibration
