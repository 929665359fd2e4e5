#pragma once
// The calibration database: measured kernel times keyed by MeasurementKey, each with its
// statistics (median, min, samples × repetitions), the algorithm that ran and the id of the
// provenance record (device, driver, library versions, date, command) it came from. One key
// holds one measurement; merging keeps the newer of two measurements of the same key. The file
// format (YAML, versioned) is documented in calibration/README.md.

#include <map>
#include <string>
#include <vector>

#include "calibration/measurement_key.hpp"

namespace scalecast::calibration {

struct Source {
  std::string id;           // unique in the file, e.g. "deepbench-v100"
  std::string device;       // catalog key the rows are for
  std::string device_name;  // as the driver reports it, e.g. "Tesla V100-SXM2-16GB"
  std::string backend;      // "cuda", "cpu", "published"
  std::string driver;
  std::map<std::string, std::string> libraries;   // "cudnn" → "7.6.2"
  std::map<std::string, std::string> properties;  // SM count, clocks, cores, ...
  std::string date;                               // ISO 8601 (UTC)
  std::string command;                            // what produced the rows
  std::string timing;                             // how the rows were timed
  bool operator==(const Source&) const = default;
};

struct Measurement {
  MeasurementKey key;
  double median_s = 0.0;
  double min_s = 0.0;
  int samples = 1;        // timed samples
  int reps = 1;           // calls per sample
  std::string algorithm;  // "" when unknown
  std::string math;       // "", "fma", "tensor_op"
  std::int64_t workspace_bytes = 0;
  double bytes_moved = 0.0;  // measured op's traffic when the backend knows it (0 = unknown)
  std::string note;          // e.g. "timed with c padded to 8"
  std::string source;        // id of a Source in the same database
  bool operator==(const Measurement&) const = default;
};

struct MergeReport {
  int added = 0;     // keys that were new
  int replaced = 0;  // keys whose measurement the newer incoming one replaced
  int kept = 0;      // keys where the existing measurement was newer and stayed
};

class Database {
 public:
  // Adds a provenance record; throws std::invalid_argument when the id exists with other content.
  void add_source(const Source& source);
  // Adds or replaces the measurement of its key; its source must exist. Returns true on replace.
  bool put(const Measurement& m);

  const Measurement* find(const MeasurementKey& key) const;
  const Source* source(const std::string& id) const;
  bool contains(const MeasurementKey& key) const { return find(key) != nullptr; }

  // In key order (stable, so files are deterministic).
  std::vector<const Measurement*> measurements() const;
  const std::map<std::string, Source>& sources() const { return sources_; }
  std::vector<std::string> devices() const;
  std::size_t size() const { return rows_.size(); }

  // Merges `other` into this database. Rule: a key present in both keeps the measurement whose
  // source date is later (ISO dates compare as strings); on equal dates the incoming one wins.
  // Sources are united; the same id with different content is an error.
  MergeReport merge(const Database& other);

  bool operator==(const Database&) const = default;

 private:
  std::map<std::string, Source> sources_;
  std::map<MeasurementKey, Measurement> rows_;
};

// The on-disk format: `format: scalecast-calibration`, `version: 1`, `sources:` and `entries:`.
inline constexpr int kDatabaseVersion = 1;

// Reads a database file; malformed content is a common::ConfigError naming file:line:col and
// the key path (e.g. "entries[3].median_s").
Database load_database(const std::string& path);
Database parse_database(const std::string& text, const std::string& display_name);
// Writes in the documented format (deterministic: same database, same bytes).
std::string to_yaml(const Database& db);
// Atomic write (common::write_file_atomic).
void save_database(const Database& db, const std::string& path);

}  // namespace scalecast::calibration
