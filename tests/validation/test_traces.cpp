#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/config_error.hpp"
#include "validation/intervals.hpp"
#include "validation/trace_comparison.hpp"
#include "validation/trace_metrics.hpp"
#include "validation/trace_reader.hpp"

using namespace scalecast::validation;
using scalecast::common::ConfigError;

namespace {

std::string data(const std::string& file) {
  return std::string(SCALECAST_SOURCE_DIR) + "/tests/validation/data/" + file;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Builds the nsys fixture database from the committed SQL text.
std::string make_nsys_db(const std::string& sql_file, const std::string& db_name) {
  const std::filesystem::path dir =
      std::filesystem::path(SCALECAST_BINARY_DIR) / "tests" / "validation" / "tmp";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / db_name).string();
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, slurp(data(sql_file)).c_str(), nullptr, nullptr, &err);
  INFO((err ? err : ""));
  REQUIRE(rc == SQLITE_OK);
  sqlite3_free(err);
  sqlite3_close(db);
  return path;
}

// The nsys fixture with `edit` (SQL) applied: a hostile variant of a real export.
std::string make_nsys_variant(const std::string& db_name, const std::string& edit) {
  const std::string path = make_nsys_db("nsys_export.sql", db_name);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, edit.c_str(), nullptr, nullptr, &err);
  INFO((err ? err : ""));
  REQUIRE(rc == SQLITE_OK);
  sqlite3_free(err);
  sqlite3_close(db);
  return path;
}

// The error compute_metrics gives for a JSON trace, or "<no error>".
std::string metrics_error(const std::string& text, const TraceMetricsOptions& metrics = {},
                          const std::vector<ClassRule>& rules = {}) {
  TraceReadOptions options;
  options.classifier = EventClassifier(rules);
  Trace t = read_json_trace(text, "t.json", TraceFormat::kAuto, options);
  try {
    compute_metrics(t, options.classifier, metrics);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string json_error(const std::string& text, TraceFormat format = TraceFormat::kAuto) {
  try {
    read_json_trace(text, "t.json", format, {});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

constexpr double kMs = 1e-3;

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("interval union merges overlaps and intersection measures overlap") {
    const auto u = interval_union({{5, 8}, {0, 4}, {3, 6}, {10, 10}, {12, 15}});
    REQUIRE(u.size() == 2);
    CHECK(u[0] == Interval{0, 8});
    CHECK(u[1] == Interval{12, 15});
    CHECK(total_length(u) == 11);
    CHECK(intersection_length(u, interval_union({{7, 13}})) == 2);
  }

  TEST_CASE("Chrome trace with X and B/E events gives per-step busy time as unions") {
    TraceReadOptions options;
    Trace t = read_trace(data("chrome_steps.json"), options);
    CHECK(t.format == "chrome");
    const TraceMetrics m = compute_metrics(t, options.classifier);
    CHECK(m.device == "gpu0");
    CHECK(m.iteration_count == 3);
    CHECK(m.steady_count == 2);
    const IterationMetrics& s = m.median;
    CHECK(s.iteration_s == doctest::Approx(10 * kMs));
    CHECK(s.compute_s == doctest::Approx(6 * kMs));
    CHECK(s.comm_s == doctest::Approx(3 * kMs));
    CHECK(s.overlapped_comm_s == doctest::Approx(1 * kMs));
    CHECK(s.exposed_comm_s == doctest::Approx(2 * kMs));
    CHECK(s.copy_s == doctest::Approx(0.5 * kMs));
    CHECK(s.idle_s == doctest::Approx(1.5 * kMs));
    CHECK(s.op_class_s.at("conv") == doctest::Approx(4 * kMs));
    CHECK(s.op_class_s.at("elementwise") == doctest::Approx(2 * kMs));
    // The warm-up step (slower conv) is in the list but not in the median.
    CHECK(m.iterations[0].compute_s == doctest::Approx(8.5 * kMs));
  }

  TEST_CASE("Kineto trace uses GPU-side ProfilerStep markers and kernel categories") {
    TraceReadOptions options;
    Trace t = read_trace(data("kineto_steps.json"), options);
    CHECK(t.format == "kineto");
    const TraceMetrics m = compute_metrics(t, options.classifier);
    CHECK(m.device == "0");
    CHECK(m.iteration_count == 3);
    const IterationMetrics& s = m.median;
    CHECK(s.iteration_s == doctest::Approx(18 * kMs));
    CHECK(s.compute_s == doctest::Approx(12 * kMs));
    CHECK(s.comm_s == doctest::Approx(6 * kMs));
    CHECK(s.exposed_comm_s == doctest::Approx(5 * kMs));
    CHECK(s.copy_s == doctest::Approx(1 * kMs));  // the host cudaMemcpyAsync is not a copy
    CHECK(s.idle_s == doctest::Approx(0.0));
    CHECK(s.op_class_s.at("conv") == doctest::Approx(8 * kMs));
    CHECK(s.op_class_s.at("gemm") == doctest::Approx(4 * kMs));
    bool saw_collective = false;
    for (const TraceEvent& e : t.events) {
      if (e.event_class != EventClass::kComm) continue;
      saw_collective = true;
      CHECK(e.coll_type == "allreduce");
      CHECK(e.bytes == doctest::Approx(1048576.0 * 4));
    }
    CHECK(saw_collective);
  }

  TEST_CASE("Horovod timeline without its closing bracket is read and periods inferred") {
    TraceReadOptions options;
    Trace t = read_trace(data("horovod_truncated.json"), options);
    CHECK(t.format == "horovod");
    const TraceMetrics m = compute_metrics(t, options.classifier);
    CHECK(m.iteration_count == 2);
    const IterationMetrics& s = m.median;
    CHECK(s.iteration_s == doctest::Approx(100 * kMs));
    CHECK(s.comm_s == doctest::Approx(15 * kMs));
    CHECK(s.copy_s == doctest::Approx(1.5 * kMs));
    CHECK(s.compute_s == doctest::Approx(0.0));
    CHECK(s.idle_s == doctest::Approx(83.5 * kMs));
  }

  TEST_CASE("Nsight Systems SQLite export with NVTX steps and launch correlation") {
    const std::string db = make_nsys_db("nsys_export.sql", "nsys_export.sqlite");
    TraceReadOptions options;
    Trace t = read_trace(db, options);
    CHECK(t.format == "nsys");
    CHECK(t.markers.size() == 3);
    const TraceMetrics m = compute_metrics(t, options.classifier);
    CHECK(m.iteration_count == 3);
    const IterationMetrics& s = m.median;
    // The conv launched at +9 ms runs at +10.5..11.5 ms, after the NVTX step ended: it belongs
    // to its launching step, which therefore spans 1..11.5 ms.
    CHECK(s.iteration_s == doctest::Approx(10.5 * kMs));
    CHECK(s.compute_s == doctest::Approx(5 * kMs));
    CHECK(s.comm_s == doctest::Approx(3 * kMs));
    CHECK(s.exposed_comm_s == doctest::Approx(2 * kMs));
    CHECK(s.copy_s == doctest::Approx(1 * kMs));
    CHECK(s.idle_s == doctest::Approx(2.5 * kMs));
    CHECK(s.op_class_s.at("gemm") == doctest::Approx(4 * kMs));
    CHECK(s.op_class_s.at("conv") == doctest::Approx(1 * kMs));
  }

  TEST_CASE("scalecast trace.json: stream categories and numbered iterations") {
    TraceReadOptions options;
    options.format = TraceFormat::kChrome;
    Trace t = read_trace(data("scalecast_trace.json"), options);
    const TraceMetrics m = compute_metrics(t, options.classifier);
    CHECK(m.device == "node0000");
    CHECK(m.iteration_count == 3);
    CHECK(m.steady_count == 2);
    const IterationMetrics& s = m.median;
    CHECK(s.iteration_s == doctest::Approx(7.5 * kMs));  // first start to last end
    CHECK(s.compute_s == doctest::Approx(5 * kMs));
    CHECK(s.comm_s == doctest::Approx(3 * kMs));
    CHECK(s.exposed_comm_s == doctest::Approx(2 * kMs));
    CHECK(s.copy_s == doctest::Approx(0.5 * kMs));
    CHECK(s.idle_s == doctest::Approx(0.0));
    CHECK(s.op_class_s.at("conv") == doctest::Approx(3 * kMs));
    CHECK(s.op_class_s.at("gemm") == doctest::Approx(2 * kMs));
  }

  TEST_CASE("scalecast LLM trace.json: TP, CP, DP and pipeline waits are communication") {
    // Before, only the category "comm" was: compare-trace on an LLM scenario reported 0 ms of
    // simulated communication whatever the run spent in its collectives.
    std::string text = R"({"traceEvents":[)";
    const char* cats[] = {"compute", "tp", "compute", "pp_wait", "cp", "dp"};
    double ts = 0.0;
    for (int it = 0; it < 2; ++it)
      for (const char* cat : cats) {
        text += fmt::format(
            R"({{"name":"mb0 F","cat":"{}","ph":"X","pid":1,"tid":0,"ts":{},"dur":1000,)"
            R"("args":{{"iteration":{}}}}},)",
            cat, ts, it);
        ts += 1000.0;
      }
    text.back() = ']';
    text += "}";
    TraceReadOptions options;
    options.format = TraceFormat::kChrome;
    Trace t = read_json_trace(text, "t.json", TraceFormat::kChrome, options);
    int comm = 0;
    for (const TraceEvent& e : t.events) comm += e.event_class == EventClass::kComm ? 1 : 0;
    CHECK(comm == 8);
    const TraceMetrics m = compute_metrics(t, options.classifier);
    CHECK(m.median.compute_s == doctest::Approx(2 * kMs));
    CHECK(m.median.comm_s == doctest::Approx(4 * kMs));
    CHECK(m.median.exposed_comm_s == doctest::Approx(4 * kMs));
  }

  TEST_CASE("user rules classify custom communication kernels") {
    const std::string text =
        R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"dpsk::ep::internode::dispatch",)"
        R"("pid":0,"tid":3,"ts":0,"dur":10}]})";
    Trace plain = read_json_trace(text, "t.json", TraceFormat::kAuto, {});
    CHECK(plain.events.at(0).event_class == EventClass::kCompute);
    TraceReadOptions options;
    options.classifier = EventClassifier({EventClassifier::parse_rule("^dpsk::ep::=comm")});
    Trace custom = read_json_trace(text, "t.json", TraceFormat::kAuto, options);
    CHECK(custom.events.at(0).event_class == EventClass::kComm);
    CHECK_THROWS_WITH_AS(EventClassifier::parse_rule("^dpsk=network"),
                         "classification rule \"^dpsk=network\": class must be compute, comm, "
                         "memcpy or other, got \"network\"",
                         std::invalid_argument);
  }

  TEST_CASE("comparison gives signed errors per category and op class") {
    TraceReadOptions options;
    Trace a = read_trace(data("chrome_steps.json"), options);
    Trace b = read_trace(data("kineto_steps.json"), options);
    const TraceMetrics ma = compute_metrics(a, options.classifier);
    const TraceMetrics mb = compute_metrics(b, options.classifier);
    const TraceComparison c = compare_metrics(ma, mb);
    REQUIRE(c.categories.size() == 6);
    CHECK(c.categories[0].name == "iteration");
    CHECK(c.categories[0].error_pct == doctest::Approx(80.0));   // 18 ms vs 10 ms
    CHECK(c.categories[1].error_pct == doctest::Approx(100.0));  // 12 ms vs 6 ms
    const std::string text = format_comparison(c, ma, mb);
    CHECK(text.find("exposed communication") != std::string::npos);
    CHECK(comparison_json(c).find("\"op_classes\"") != std::string::npos);
  }

  TEST_CASE("malformed traces give precise errors") {
    CHECK(json_error(R"({"traceEvents": [ {"ph": "X", "ts": 1, } ]})") ==
          "t.json:1:40: error: invalid JSON: syntax error while parsing object key - unexpected "
          "'}'; expected string literal");
    CHECK(json_error(R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 1}]})") ==
          "t.json: error: traceEvents[0]: missing 'dur' (microseconds)");
    CHECK(json_error(R"([{"ph": "X", "ts": "12", "dur": 1}])", TraceFormat::kChrome) ==
          "t.json: error: traceEvents[0].ts: expected a number of microseconds, got \"12\"");
    CHECK(json_error(R"([{"ph": "E", "ts": 3, "pid": 1, "tid": 2}])", TraceFormat::kChrome) ==
          "t.json: error: traceEvents[0]: 'E' event without a matching 'B' on pid 1 tid 2");
    CHECK(json_error(R"([{"ph": "B", "name": "fwd", "ts": 3, "pid": 1, "tid": 2}])",
                     TraceFormat::kChrome) ==
          "t.json: error: traceEvents[0]: 'B' event \"fwd\" on pid 1 tid 2 is never closed by an "
          "'E'");
    CHECK(json_error(R"([{"name": "x", "ts": 3}])", TraceFormat::kChrome) ==
          "t.json: error: traceEvents[0]: missing 'ph' (the event phase, a string such as \"X\")");
    CHECK(json_error("42") ==
          "t.json: error: expected a JSON array of trace events or an object with "
          "\"traceEvents\"");
    CHECK(json_error(R"({"traceEvents": {}})") ==
          "t.json: error: traceEvents: expected an array of events");
  }

  TEST_CASE("hostile traces with absurd times or deep nesting and non-regular files are refused") {
    // dur 1e300 used to overflow the nanosecond sums (negative totals, exit 0).
    CHECK(json_error(R"([{"ph": "X", "ts": 1, "dur": 1e300}])", TraceFormat::kChrome) ==
          "t.json: error: traceEvents[0].dur: expected a finite number of microseconds within "
          "+-4e+15, got 1e+300");
    CHECK(json_error(R"([{"ph": "X", "ts": 1, "dur": 2}, {"ph": "B", "ts": -5e16}])",
                     TraceFormat::kChrome) ==
          "t.json: error: traceEvents[1].ts: expected a finite number of microseconds within "
          "+-4e+15, got -5e+16");
    // 100,000 nested arrays used to crash (stack overflow in the JSON value code).
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    CHECK(json_error(deep) == "t.json:1:257: error: JSON nested deeper than 256 levels");
    // Brackets inside strings do not count.
    CHECK(json_error(R"([{"ph": "X", "name": ")" + std::string(300, '[') +
                     R"(", "ts": 1, "dur": 2}])") == "<no error>");
    // /dev/zero used to be read forever; a folder is no trace either.
    const auto read_error = [](const std::string& path) {
      try {
        read_trace(path, {});
      } catch (const ConfigError& e) {
        return std::string(e.what());
      }
      return std::string("<no error>");
    };
    CHECK(read_error("/dev/zero") ==
          "/dev/zero: error: expected a regular file (not a device, FIFO or folder)");
    CHECK(read_error("/nonexistent/t.json") ==
          "/nonexistent/t.json: error: cannot open the trace file");
  }

  TEST_CASE("malformed nsys exports give precise errors") {
    const std::string db = make_nsys_db("nsys_no_kernels.sql", "nsys_no_kernels.sqlite");
    TraceReadOptions options;
    options.format = TraceFormat::kNsys;
    CHECK_THROWS_WITH_AS(read_trace(db, options),
                         (db + ": error: no table CUPTI_ACTIVITY_KIND_KERNEL (the report holds "
                               "no GPU kernels)")
                             .c_str(),
                         ConfigError);
    CHECK_THROWS_WITH_AS(
        read_trace(data("chrome_steps.json"), options),
        (data("chrome_steps.json") + ": error: not an SQLite database (expected an nsys export)")
            .c_str(),
        ConfigError);
  }

  TEST_CASE("hostile nsys exports: out-of-range, reversed and non-integer times are refused") {
    TraceReadOptions options;
    options.format = TraceFormat::kNsys;
    const auto nsys_error = [&](const std::string& name, const std::string& edit) {
      const std::string db = make_nsys_variant(name, edit);
      try {
        read_trace(db, options);
      } catch (const ConfigError& e) {
        const std::string what = e.what();
        // The path of the database, then the cell.
        return what.rfind(db + ": error: ", 0) == 0 ? what.substr(db.size() + 9) : what;
      }
      return std::string("<no error>");
    };
    // Each used to be read as it came: start INT64_MIN gave -4.6e12 ms of compute, end
    // INT64_MAX a huge iteration, end < start dropped the kernel, text 'abc' was read as 0.
    CHECK(nsys_error("negts.sqlite",
                     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -9223372036854775808 "
                     "WHERE rowid = 4") ==
          "CUPTI_ACTIVITY_KIND_KERNEL[rowid 4].start: expected an integer number of nanoseconds "
          "within +-4e+18, got -9223372036854775808");
    CHECK(nsys_error("hugets.sqlite",
                     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = 9223372036854775807 "
                     "WHERE rowid = 4") ==
          "CUPTI_ACTIVITY_KIND_KERNEL[rowid 4].end: expected an integer number of nanoseconds "
          "within +-4e+18, got 9223372036854775807");
    CHECK(nsys_error("negdur.sqlite",
                     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 17000000, end = 13000000 "
                     "WHERE rowid = 4") ==
          "CUPTI_ACTIVITY_KIND_KERNEL[rowid 4].end: expected an end >= start (17000000 ns; a "
          "duration >= 0), got 13000000 ns");
    CHECK(nsys_error("textts.sqlite",
                     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'abc' WHERE rowid = 4") ==
          "CUPTI_ACTIVITY_KIND_KERNEL[rowid 4].start: expected an integer number of nanoseconds "
          "within +-4e+18, got text \"abc\"");
    CHECK(nsys_error("realts.sqlite",
                     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 13000000.5 WHERE rowid = 4") ==
          "CUPTI_ACTIVITY_KIND_KERNEL[rowid 4].start: expected an integer number of nanoseconds "
          "within +-4e+18, got real 13000000.5");
    CHECK(nsys_error("textdev.sqlite",
                     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 'gpu' WHERE rowid = 2") ==
          "CUPTI_ACTIVITY_KIND_KERNEL[rowid 2].deviceId: expected a non-negative integer, got "
          "text \"gpu\"");
    // A negative device was read as device "-5" and a negative correlation matched nothing; a
    // NULL correlation (the schema allows it) is no launch to match, not 0.
    CHECK(nsys_error("negdev.sqlite",
                     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = -5 WHERE rowid = 2") ==
          "CUPTI_ACTIVITY_KIND_KERNEL[rowid 2].deviceId: expected a non-negative integer, got -5");
    CHECK(nsys_error("negcorr.sqlite",
                     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = -3 WHERE rowid = 3") ==
          "CUPTI_ACTIVITY_KIND_KERNEL[rowid 3].correlationId: expected a non-negative integer, "
          "got -3");
    CHECK(
        nsys_error("nullcorr.sqlite",
                   "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = NULL WHERE rowid = 3") ==
        "<no error>");
    CHECK(nsys_error("memcpy.sqlite",
                     "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = 'late' WHERE rowid = 2") ==
          "CUPTI_ACTIVITY_KIND_MEMCPY[rowid 2].end: expected an integer number of nanoseconds "
          "within +-4e+18, got text \"late\"");
    CHECK(nsys_error("nvtx.sqlite",
                     "UPDATE NVTX_EVENTS SET start = 10, end = 5 WHERE text = 'step 1'") ==
          "NVTX_EVENTS[rowid 1].end: expected an end >= start (10 ns; a duration >= 0), got 5 "
          "ns");
    CHECK(nsys_error("runtime.sqlite",
                     "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = 'x' WHERE correlationId = "
                     "104") ==
          "CUPTI_ACTIVITY_KIND_RUNTIME[rowid 4].start: expected an integer number of "
          "nanoseconds within +-4e+18, got text \"x\"");
    // NVTX marks (no end) are no ranges and stay ignored.
    CHECK(nsys_error("mark.sqlite",
                     "INSERT INTO NVTX_EVENTS (start, end, eventType, text) VALUES (5, NULL, 34, "
                     "'step 9')") == "<no error>");
  }

  TEST_CASE("a trace with nothing to compare is an error naming it, not a table of zeros") {
    // Each used to exit 4 with an unlocated message, or 0 with all zeros.
    CHECK(metrics_error("[]") ==
          "t.json: error: expected device events (GPU kernels, memory copies or collectives), "
          "found none (read as a chrome trace: 0 events, 0 step markers)");
    CHECK(metrics_error(R"([{"ph":"X","name":"iteration 1","cat":"step","ts":0,"dur":10},)"
                        R"({"ph":"X","name":"iteration 2","cat":"step","ts":10,"dur":10}])") ==
          "t.json: error: expected device events (GPU kernels, memory copies or collectives), "
          "found none (read as a chrome trace: 0 events, 2 step markers)");
    const std::string steps = slurp(data("chrome_steps.json"));
    TraceMetricsOptions nosuch;
    nosuch.device = "nosuch";
    CHECK(metrics_error(steps, nosuch) ==
          "t.json: error: no device events on device \"nosuch\" (the trace's devices: gpu0, "
          "gpu1)");
    CHECK(metrics_error(steps, {}, {EventClassifier::parse_rule("stream:.*=other")}) ==
          "t.json: error: the classification rules class all 12 events on device \"gpu0\" as "
          "'other': no compute, communication or copy time is left to compare");
    TraceMetricsOptions warm;
    warm.warmup = 100;  // used to be cut silently to one steady iteration
    CHECK(metrics_error(steps, warm) ==
          "t.json: error: a warmup of 100 leaves no steady iteration: the trace has 3 iterations "
          "with device work on device \"gpu0\"; give a warmup (--warmup) of at most 2");
    warm.warmup = 2;
    CHECK(metrics_error(steps, warm) == "<no error>");
    CHECK(metrics_error(R"([{"ph":"X","name":"iteration 1","cat":"step","ts":0,"dur":0},)"
                        R"({"ph":"X","name":"k","ts":0,"dur":0,"pid":1,"tid":1}])") ==
          "t.json: error: no event on device \"1\" (1 in all) falls in an iteration the step "
          "markers delimit (1 in all): no iteration to compare");
    CHECK(metrics_error(R"([{"ph":"X","name":"k","ts":0,"dur":0,"pid":1,"tid":1}])") ==
          "t.json: error: the steady iterations on device \"1\" (1 of 1) last 0 s (zero-length "
          "step markers and events): no device time to compare");
  }

  TEST_CASE("classification rules: empty patterns, bad regular expressions and classes") {
    const auto rule_error = [](const std::string& text) {
      try {
        EventClassifier::parse_rule(text);
      } catch (const std::invalid_argument& e) {
        return std::string(e.what());
      }
      return std::string("<no error>");
    };
    CHECK(rule_error("=compute") ==
          "classification rule \"=compute\": empty pattern before '=' (expected a regular "
          "expression, e.g. ^dpsk)");
    CHECK(rule_error("stream:=comm") ==
          "classification rule \"stream:=comm\": empty pattern before '=' (expected a regular "
          "expression, e.g. ^dpsk)");
    CHECK(rule_error("x=bogus") ==
          "classification rule \"x=bogus\": class must be compute, comm, memcpy or other, got "
          "\"bogus\"");
    CHECK(rule_error("compute") ==
          "classification rule \"compute\": expected [name:|cat:|stream:]REGEX=compute|comm|"
          "memcpy|other (no '=')");
    // Used to pass parse_rule and fail later, unlocated (exit 4).
    CHECK(rule_error("(=compute")
              .rfind("classification rule \"(=compute\": invalid regular expression \"(\": ", 0) ==
          0);
    CHECK(rule_error("a=b=comm") == "<no error>");  // the last '=' separates the class
  }
}
