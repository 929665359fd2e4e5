// Nsight Systems SQLite export ([nsys-schema], docs/sources.md): kernels and copies
// from the CUPTI activity tables (ns), names through StringIds, iterations from NVTX ranges.
// Columns differ between nsys versions, so they are probed with PRAGMA table_info.

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "common/config_error.hpp"
#include "validation/trace_reader.hpp"

namespace scalecast::validation {
namespace {

using common::ConfigError;

class Db {
 public:
  explicit Db(const std::string& path) : path_(path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw ConfigError(path, 0, 0, "", "cannot open as SQLite: " + msg);
    }
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs `sql`, calling `row` with the statement for every result row.
  template <typename F>
  void query(const std::string& sql, F&& row) const {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      const std::string msg = sqlite3_errmsg(db_);
      throw ConfigError(path_, 0, 0, "", fmt::format("not an Nsight Systems export ({})", msg));
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) row(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) {
      throw ConfigError(path_, 0, 0, "", fmt::format("reading failed: {}", sqlite3_errmsg(db_)));
    }
  }

  std::set<std::string> tables() const {
    std::set<std::string> out;
    query("SELECT name FROM sqlite_master WHERE type='table'", [&](sqlite3_stmt* s) {
      out.insert(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
    });
    return out;
  }

  std::set<std::string> columns(const std::string& table) const {
    std::set<std::string> out;
    query("PRAGMA table_info(" + table + ")", [&](sqlite3_stmt* s) {
      out.insert(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)));
    });
    return out;
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

std::string text_of(sqlite3_stmt* s, int col) {
  const unsigned char* t = sqlite3_column_text(s, col);
  return t ? reinterpret_cast<const char*>(t) : "";
}

// Timestamps in ns within +-4e18 (the Chrome-JSON reader's +-4e15 us): every start + duration
// and every difference of two stays inside a 64-bit integer.
constexpr std::int64_t kMaxNanoseconds = 4'000'000'000'000'000'000;

// "CUPTI_ACTIVITY_KIND_KERNEL[rowid 4].start": where a bad value sits.
std::string cell(const std::string& table, std::int64_t rowid, const char* column) {
  return fmt::format("{}[rowid {}].{}", table, rowid, column);
}

// What a column holds, for messages: "text \"abc\"", "real 1e+300", "NULL".
std::string describe(sqlite3_stmt* s, int col) {
  switch (sqlite3_column_type(s, col)) {
    case SQLITE_INTEGER:
      return std::to_string(sqlite3_column_int64(s, col));
    case SQLITE_FLOAT:
      return fmt::format("real {}", sqlite3_column_double(s, col));
    case SQLITE_TEXT:
      return fmt::format("text \"{}\"", reinterpret_cast<const char*>(sqlite3_column_text(s, col)));
    case SQLITE_BLOB:
      return "a blob";
    default:
      return "NULL";
  }
}

// An integer column (ids); sqlite3_column_int64 would read text as 0 and a real truncated.
// An id column (device, stream, correlation): CUPTI's are unsigned, so a negative one (read as
// a device "-5") is an error.
std::int64_t integer_at(sqlite3_stmt* s, int col, const std::string& path, const std::string& table,
                        std::int64_t rowid, const char* column) {
  const bool integer = sqlite3_column_type(s, col) == SQLITE_INTEGER;
  if (!integer || sqlite3_column_int64(s, col) < 0)
    throw ConfigError(path, 0, 0, cell(table, rowid, column),
                      fmt::format("expected a non-negative integer, got {}", describe(s, col)));
  return sqlite3_column_int64(s, col);
}

// A correlation id, or -1 where it is NULL (the schema allows it): no launch to match. It was
// read as 0, which matched another row's launch.
std::int64_t correlation_at(sqlite3_stmt* s, int col, const std::string& path,
                            const std::string& table, std::int64_t rowid) {
  if (sqlite3_column_type(s, col) == SQLITE_NULL) return -1;
  return integer_at(s, col, path, table, rowid, "correlationId");
}

// A timestamp column: an integer number of nanoseconds within +-kMaxNanoseconds.
std::int64_t time_at(sqlite3_stmt* s, int col, const std::string& path, const std::string& table,
                     std::int64_t rowid, const char* column) {
  const bool integer = sqlite3_column_type(s, col) == SQLITE_INTEGER;
  const std::int64_t v = integer ? sqlite3_column_int64(s, col) : 0;
  if (!integer || v < -kMaxNanoseconds || v > kMaxNanoseconds)
    throw ConfigError(path, 0, 0, cell(table, rowid, column),
                      fmt::format("expected an integer number of nanoseconds within +-{:g}, got {}",
                                  static_cast<double>(kMaxNanoseconds), describe(s, col)));
  return v;
}

// start and end of an activity row; end before start is a negative duration.
std::pair<std::int64_t, std::int64_t> span_at(sqlite3_stmt* s, int start_col,
                                              const std::string& path, const std::string& table,
                                              std::int64_t rowid) {
  const std::int64_t t0 = time_at(s, start_col, path, table, rowid, "start");
  const std::int64_t t1 = time_at(s, start_col + 1, path, table, rowid, "end");
  if (t1 < t0)
    throw ConfigError(
        path, 0, 0, cell(table, rowid, "end"),
        fmt::format("expected an end >= start ({} ns; a duration >= 0), got {} ns", t0, t1));
  return {t0, t1};
}

void require_columns(const Db& db, const std::string& path, const std::string& table,
                     const std::vector<std::string>& needed) {
  const std::set<std::string> have = db.columns(table);
  for (const std::string& c : needed) {
    if (!have.count(c)) {
      throw ConfigError(path, 0, 0, table,
                        fmt::format("missing column '{}' (expected an nsys export)", c));
    }
  }
}

}  // namespace

Trace read_nsys_sqlite(const std::string& path, const TraceReadOptions& options) {
  {
    std::ifstream in(path, std::ios::binary);
    char magic[16] = {};
    in.read(magic, sizeof magic);
    if (!in || std::string(magic, 15) != "SQLite format 3") {
      throw ConfigError(path, 0, 0, "", "not an SQLite database (expected an nsys export)");
    }
  }
  const Db db(path);
  const std::set<std::string> tables = db.tables();
  const std::string kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
  if (!tables.count(kKernel)) {
    throw ConfigError(path, 0, 0, "", "no table " + kKernel + " (the report holds no GPU kernels)");
  }
  if (!tables.count("StringIds")) throw ConfigError(path, 0, 0, "", "no table StringIds");
  require_columns(db, path, kKernel, {"start", "end", "deviceId", "streamId"});
  const std::set<std::string> kcols = db.columns(kKernel);
  const std::string name_col = kcols.count("demangledName") ? "demangledName"
                               : kcols.count("shortName")   ? "shortName"
                                                            : "";
  if (name_col.empty()) {
    throw ConfigError(path, 0, 0, kKernel, "missing column 'demangledName' or 'shortName'");
  }
  const bool has_corr = kcols.count("correlationId") > 0;
  Trace trace;
  trace.source = path;
  trace.format = "nsys";
  std::vector<std::int64_t> correlation;  // per event, -1 when unknown
  db.query(fmt::format("SELECT k.start, k.end, k.deviceId, k.streamId, s.value, {}, k.rowid "
                       "FROM {} k LEFT JOIN StringIds s ON s.id = k.{} ORDER BY k.start",
                       has_corr ? "k.correlationId" : "-1", kKernel, name_col),
           [&](sqlite3_stmt* s) {
             const std::int64_t rowid = sqlite3_column_int64(s, 6);
             TraceEvent e;
             std::tie(e.t_start_ns, e.t_end_ns) = span_at(s, 0, path, kKernel, rowid);
             e.device = std::to_string(integer_at(s, 2, path, kKernel, rowid, "deviceId"));
             e.stream = std::to_string(integer_at(s, 3, path, kKernel, rowid, "streamId"));
             e.name = text_of(s, 4);
             e.category = "kernel";
             e.on_device = true;
             correlation.push_back(has_corr ? correlation_at(s, 5, path, kKernel, rowid) : -1);
             trace.events.push_back(std::move(e));
           });
  for (const char* table : {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"}) {
    if (!tables.count(table)) continue;
    require_columns(db, path, table, {"start", "end", "deviceId", "streamId"});
    const bool corr = db.columns(table).count("correlationId") > 0;
    const std::string kind =
        std::string(table) == "CUPTI_ACTIVITY_KIND_MEMCPY" ? "Memcpy" : "Memset";
    db.query(fmt::format("SELECT start, end, deviceId, streamId, {}, rowid FROM {} ORDER BY start",
                         corr ? "correlationId" : "-1", table),
             [&](sqlite3_stmt* s) {
               const std::int64_t rowid = sqlite3_column_int64(s, 5);
               TraceEvent e;
               std::tie(e.t_start_ns, e.t_end_ns) = span_at(s, 0, path, table, rowid);
               e.device = std::to_string(integer_at(s, 2, path, table, rowid, "deviceId"));
               e.stream = std::to_string(integer_at(s, 3, path, table, rowid, "streamId"));
               e.name = kind;
               e.category = "gpu_" + kind;
               e.on_device = true;
               correlation.push_back(corr ? correlation_at(s, 4, path, table, rowid) : -1);
               trace.events.push_back(std::move(e));
             });
  }
  // NVTX ranges whose text names a step are the iteration markers (CPU time). Kernels are put
  // into the range that contains their launching runtime call on the same thread.
  if (tables.count("NVTX_EVENTS")) {
    require_columns(db, path, "NVTX_EVENTS", {"start", "end"});
    const std::set<std::string> ncols = db.columns("NVTX_EVENTS");
    std::string text_expr = ncols.count("text") ? "n.text" : "NULL";
    std::string join;
    if (ncols.count("textId")) {
      text_expr = fmt::format("COALESCE({}, t.value)", text_expr);
      join = "LEFT JOIN StringIds t ON t.id = n.textId";
    }
    const std::regex step(options.step_pattern);
    // A mark (end NULL) is no range; a step range's times are checked like an activity's.
    db.query(fmt::format("SELECT n.start, n.end, {}, n.rowid FROM NVTX_EVENTS n {} "
                         "WHERE n.end IS NOT NULL ORDER BY n.start",
                         text_expr, join),
             [&](sqlite3_stmt* s) {
               const std::string text = text_of(s, 2);
               if (!std::regex_match(text, step)) return;
               const auto [t0, t1] = span_at(s, 0, path, "NVTX_EVENTS", sqlite3_column_int64(s, 3));
               if (t1 > t0) trace.markers.push_back({t0, t1, false, text});
             });
  }
  // Launch times: a kernel belongs to the step its launch happened in, not the one it ran in.
  if (has_corr && tables.count("CUPTI_ACTIVITY_KIND_RUNTIME") && !trace.markers.empty()) {
    std::map<std::int64_t, std::int64_t> launch_ns;
    db.query("SELECT correlationId, start, rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME",
             [&](sqlite3_stmt* s) {
               const std::int64_t rowid = sqlite3_column_int64(s, 2);
               const char* runtime = "CUPTI_ACTIVITY_KIND_RUNTIME";
               const std::int64_t id = correlation_at(s, 0, path, runtime, rowid);
               if (id >= 0) launch_ns[id] = time_at(s, 1, path, runtime, rowid, "start");
             });
    for (std::size_t i = 0; i < trace.events.size(); ++i) {
      const auto it = launch_ns.find(correlation[i]);
      if (it == launch_ns.end()) continue;
      for (std::size_t m = 0; m < trace.markers.size(); ++m) {
        if (it->second >= trace.markers[m].t_start_ns && it->second < trace.markers[m].t_end_ns) {
          trace.events[i].iteration = static_cast<int>(m);
        }
      }
    }
  }
  options.classifier.classify_all(trace);
  return trace;
}

}  // namespace scalecast::validation
