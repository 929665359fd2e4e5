#include <doctest/doctest.h>

#include "calibration/database.hpp"
#include "common/config_error.hpp"
#include "deepbench_fixture.hpp"

using namespace scalecast::calibration;
using scalecast::common::DType;
namespace t = scalecast::calibration::testing;

namespace {

Measurement row(const std::string& source, std::int64_t n, double median_s) {
  Measurement m;
  m.key = {"v100-sxm2",
           "conv",
           "fwd",
           DType::kFp16,
           true,
           "find",
           {{"n", n},
            {"c", 64},
            {"h", 56},
            {"w", 56},
            {"k", 64},
            {"r", 3},
            {"s", 3},
            {"pad_h", 1},
            {"pad_w", 1},
            {"stride_h", 1},
            {"stride_w", 1}}};
  m.median_s = median_s;
  m.min_s = median_s * 0.97;
  m.samples = 7;
  m.reps = 120;
  m.algorithm = "IMPLICIT_PRECOMP_GEMM";
  m.math = "tensor_op";
  m.workspace_bytes = 1 << 20;
  m.note = "timed with c padded to 64 \"as is\"";
  m.source = source;
  return m;
}

const std::string kHead =
    "format: scalecast-calibration\nversion: 1\nsources:\n"
    "  - {id: s, device: v100-sxm2, backend: cuda, date: \"2026-01-01\"}\n"
    "entries:\n";
const std::string kConvDims =
    "{n: 8, c: 64, h: 56, w: 56, k: 64, r: 3, s: 3, pad_h: 1, pad_w: 1, stride_h: 1, "
    "stride_w: 1}";

std::string entry(const std::string& fields) {
  return "  - {source: s, device: v100-sxm2, op: conv, pass: fwd, dtype: fp32, select: find, "
         "dims: " +
         kConvDims + ", " + fields + "}\n";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("database round-trips through its YAML format byte for byte") {
    Database db;
    Source s = t::test_source("h200-run", "h200-sxm");
    s.device = "v100-sxm2";
    s.device_name = "Tesla V100-SXM2-16GB";
    s.backend = "cuda";
    s.driver = "535.104";
    s.libraries = {{"cudnn", "9.19.0"}, {"cublas", "13.1"}};
    s.properties = {{"sm_count", "80"}};
    s.command = "scalecast calibrate --backend cuda --models resnet50";
    s.timing = "cuda events";
    db.add_source(s);
    db.put(row("h200-run", 8, 1.25e-4));
    db.put(row("h200-run", 16, 2.0000000000000001e-4));
    const std::string text = to_yaml(db);
    const Database back = parse_database(text, "mem.yaml");
    CHECK(back == db);
    CHECK(to_yaml(back) == text);
    MESSAGE(text);
  }

  TEST_CASE("merge keeps the newer measurement of a key") {
    Database old_db, new_db;
    old_db.add_source(t::test_source("old", "v100-sxm2", "2025-01-01"));
    new_db.add_source(t::test_source("new", "v100-sxm2", "2026-06-01"));
    old_db.put(row("old", 8, 1e-4));
    old_db.put(row("old", 4, 5e-5));
    new_db.put(row("new", 8, 2e-4));
    new_db.put(row("new", 16, 3e-4));
    Database a = old_db;
    const MergeReport r = a.merge(new_db);
    CHECK(r.added == 1);
    CHECK(r.replaced == 1);
    CHECK(r.kept == 0);
    CHECK(a.size() == 3);
    CHECK(a.find(row("x", 8, 1).key)->median_s == 2e-4);
    Database b = new_db;
    const MergeReport r2 = b.merge(old_db);  // older rows never replace newer ones
    CHECK(r2.kept == 1);
    CHECK(r2.added == 1);
    CHECK(b.find(row("x", 8, 1).key)->median_s == 2e-4);
    Database clash;
    Source other = t::test_source("old", "p100-sxm2");
    clash.add_source(other);
    CHECK_THROWS_WITH(a.merge(clash),
                      "calibration: source id 'old' already exists with different provenance");
  }

  TEST_CASE("malformed databases give precise errors") {
    using scalecast::common::ConfigError;
    CHECK_THROWS_WITH_AS(parse_database("format: other\nversion: 1\n", "db.yaml"),
                         "db.yaml:1:9: error: format: expected \"scalecast-calibration\", got "
                         "\"other\"",
                         ConfigError);
    CHECK_THROWS_WITH_AS(parse_database("format: scalecast-calibration\nversion: 2\n", "db.yaml"),
                         "db.yaml:2:10: error: version: unsupported version 2 (this build reads "
                         "version 1)",
                         ConfigError);
    CHECK_THROWS_WITH_AS(parse_database(kHead + entry("median_s: -1"), "db.yaml"),
                         "db.yaml:6:194: error: entries[0].median_s: expected a time in seconds "
                         "from 1e-09 to 3600, got \"-1\"",
                         ConfigError);
    // A time below a nanosecond is a unit slip that overflowed the fits into NaN (issue 14).
    CHECK_THROWS_WITH_AS(parse_database(kHead + entry("median_s: 1e-300"), "db.yaml"),
                         "db.yaml:6:194: error: entries[0].median_s: expected a time in seconds "
                         "from 1e-09 to 3600, got \"1e-300\"",
                         ConfigError);
    std::string bad_op = entry("median_s: 1e-4");
    bad_op.replace(bad_op.find("op: conv"), 8, "op: convv");
    CHECK_THROWS_WITH_AS(parse_database(kHead + bad_op, "db.yaml"),
                         "db.yaml:6:40: error: entries[0].op: unknown op class \"convv\" (did you "
                         "mean \"conv\"?)",
                         ConfigError);
    std::string bad_source = entry("median_s: 1e-4");
    bad_source.replace(bad_source.find("source: s"), 9, "source: q");
    CHECK_THROWS_WITH_AS(parse_database(kHead + bad_source, "db.yaml"),
                         "db.yaml:6:14: error: entries[0].source: no source with id \"q\" in "
                         "sources",
                         ConfigError);
    std::string no_dim = entry("median_s: 1e-4");
    no_dim.replace(no_dim.find("n: 8, "), 6, "");
    CHECK_THROWS_WITH_AS(parse_database(kHead + no_dim, "db.yaml"),
                         "db.yaml:6:90: error: entries[0].dims: missing dimension 'n' for op conv",
                         ConfigError);
    CHECK_THROWS_WITH_AS(
        parse_database(kHead + entry("median_s: 1e-4") + entry("median_s: 2e-4"), "db.yaml"),
        "db.yaml:7:5: error: entries[1]: duplicate measurement of v100-sxm2 conv fwd fp32 find "
        "c=64 h=56 k=64 n=8 pad_h=1 pad_w=1 r=3 s=3 stride_h=1 stride_w=1 w=56",
        ConfigError);
    CHECK_THROWS_WITH_AS(parse_database(kHead + entry("median_s: 1e-4, mediam: 3"), "db.yaml"),
                         "db.yaml:6:200: error: entries[0].mediam: unknown key (expected one of: "
                         "source, device, op, pass, dtype, tc, select, dims, median_s, min_s, "
                         "samples, reps, algo, math, workspace_bytes, bytes_moved, note)",
                         ConfigError);
    CHECK_THROWS_WITH_AS(
        load_database("/nonexistent/cal.yaml"),
        "/nonexistent/cal.yaml: error: cannot open file: No such file or directory", ConfigError);
  }

  TEST_CASE("database entries name only passes, dimensions, byte counts and dates that exist") {
    using scalecast::common::ConfigError;
    // Each was accepted before: a row under a pass or dimension no lookup ever asks for is dead
    // data, a negative bytes_moved was taken for "unknown" and a free-text date broke the
    // date order of merges.
    std::string bad_pass = entry("median_s: 1e-4");
    bad_pass.replace(bad_pass.find("pass: fwd"), 9, "pass: bwdx");
    CHECK_THROWS_WITH_AS(parse_database(kHead + bad_pass, "db.yaml"),
                         "db.yaml:6:52: error: entries[0].pass: expected fwd, bwd_data, "
                         "bwd_filter, loss or optimizer for op conv, got \"bwdx\"",
                         ConfigError);
    std::string gemm_fwd =
        "  - {source: s, device: v100-sxm2, op: gemm, pass: fwd, dtype: fp32, select: find, "
        "dims: {m: 8, n: 8, k: 8, trans_a: 0, trans_b: 0}, median_s: 1e-4}\n";
    CHECK_THROWS_WITH_AS(parse_database(kHead + gemm_fwd, "db.yaml"),
                         "db.yaml:6:52: error: entries[0].pass: expected any for op gemm, got "
                         "\"fwd\"",
                         ConfigError);
    std::string extra_dim = entry("median_s: 1e-4");
    extra_dim.replace(extra_dim.find("stride_w: 1}"), 12, "stride_w: 1, zz: 3}");
    CHECK_THROWS_WITH_AS(parse_database(kHead + extra_dim, "db.yaml"),
                         "db.yaml:6:187: error: entries[0].dims.zz: unknown dimension 'zz' for op "
                         "conv (expected one of: n, c, h, w, k, r, s, pad_h, pad_w, stride_h, "
                         "stride_w, dilation_h, dilation_w, groups)",
                         ConfigError);
    CHECK_THROWS_WITH_AS(
        parse_database(kHead + entry("median_s: 1e-4, bytes_moved: -5"), "db.yaml"),
        "db.yaml:6:213: error: entries[0].bytes_moved: expected a byte count >= 0 "
        "(leave the key out when unknown), got -5",
        ConfigError);
    std::string bad_date = kHead;
    bad_date.replace(bad_date.find("\"2026-01-01\""), 12, "\"yesterday\"");
    CHECK_THROWS_WITH_AS(parse_database(bad_date + entry("median_s: 1e-4"), "db.yaml"),
                         "db.yaml:4:53: error: sources[0].date: expected an ISO 8601 date "
                         "YYYY-MM-DD, optionally with a UTC time (YYYY-MM-DDThh:mm:ssZ, as "
                         "calibrate writes), got \"yesterday\"",
                         ConfigError);
    for (const char* date : {"2026-02-30", "2026-13-01", "2026-1-01", "2026-01-01T25:00:00Z"}) {
      std::string d = kHead;
      d.replace(d.find("2026-01-01"), 10, date);
      CAPTURE(date);
      CHECK_THROWS_AS(parse_database(d, "db.yaml"), ConfigError);
    }
    // What stays accepted: the optional dimensions, a zero or absent byte count, leap days and
    // calibrate's own date-time stamp.
    std::string dilated = entry("median_s: 1e-4, bytes_moved: 0");
    dilated.replace(dilated.find("stride_w: 1}"), 12, "stride_w: 1, dilation_h: 2, groups: 2}");
    std::string leap = kHead;
    leap.replace(leap.find("2026-01-01"), 10, "2024-02-29T23:59:59Z");
    CHECK(parse_database(leap + dilated, "db.yaml").size() == 1);
  }
}
