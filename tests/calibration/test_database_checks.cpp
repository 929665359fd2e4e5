// Calibration database rows the reader refuses (calibration/README.md "Database format"): a
// dimension given twice, a transpose flag other than 0/1, a size of 0, an unknown backend, and a
// time faster than the GPU's peak for a GPU of the default catalog.
#include <doctest/doctest.h>

#include <string>

#include "calibration/database.hpp"
#include "common/config_error.hpp"
#include "deepbench_fixture.hpp"

using namespace scalecast::calibration;
using scalecast::common::ConfigError;
namespace t = scalecast::calibration::testing;

namespace {

std::string head(const std::string& device, const std::string& backend = "cuda") {
  return "format: scalecast-calibration\nversion: 1\nsources:\n  - {id: s, device: " + device +
         ", backend: " + backend + ", date: \"2026-01-01\"}\nentries:\n";
}

std::string gemm(const std::string& device, const std::string& dims, const std::string& fields,
                 const std::string& dtype = "fp32") {
  return "  - {source: s, device: " + device + ", op: gemm, pass: any, dtype: " + dtype +
         ", select: find, dims: {" + dims + "}, " + fields + "}\n";
}

const std::string kDims = "m: 512, n: 16, k: 512, trans_a: 0, trans_b: 0";

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("database dims: a duplicate key, a transpose flag other than 0/1, a size of 0") {
    // Each was read: the last duplicate won (a merge rewrote the row as k: 3 with the 512-k
    // time), trans_a: 7 made a key no op looks up, k: 0 a zero-FLOP row the fit left out.
    const std::string h = head("v100-sxm2");
    CHECK_THROWS_WITH_AS(
        parse_database(h + gemm("v100-sxm2", kDims + ", k: 3", "median_s: 1e-4"), "db.yaml"),
        "db.yaml:6:141: error: entries[0].dims.k: duplicate key", ConfigError);
    CHECK_THROWS_WITH_AS(
        parse_database(h + gemm("v100-sxm2", "m: 512, n: 16, k: 512, trans_a: 7, trans_b: 0",
                                "median_s: 1e-4"),
                       "db.yaml"),
        "db.yaml:6:123: error: entries[0].dims.trans_a: expected 0 or 1 (a transpose flag), got 7",
        ConfigError);
    CHECK_THROWS_WITH_AS(
        parse_database(
            h + gemm("v100-sxm2", "m: 512, n: 16, k: 0, trans_a: 0, trans_b: 0", "median_s: 1e-4"),
            "db.yaml"),
        "db.yaml:6:109: error: entries[0].dims.k: expected at least 1 (a whole number from 1 to "
        "1,000,000,000), got 0",
        ConfigError);
    // Padding 0 is a real convolution.
    const std::string conv =
        "  - {source: s, device: v100-sxm2, op: conv, pass: fwd, dtype: fp32, select: find, "
        "dims: {n: 8, c: 64, h: 56, w: 56, k: 64, r: 1, s: 1, pad_h: 0, pad_w: 0, stride_h: 1, "
        "stride_w: 1}, median_s: 1e-4}\n";
    CHECK(parse_database(h + conv, "db.yaml").size() == 1);
    std::string stride0 = conv;
    stride0.replace(stride0.find("stride_h: 1"), 11, "stride_h: 0");
    CHECK_THROWS_WITH_AS(parse_database(h + stride0, "db.yaml"),
                         "db.yaml:6:167: error: entries[0].dims.stride_h: expected at least 1 (a "
                         "whole number from 1 to 1,000,000,000), got 0",
                         ConfigError);
  }

  TEST_CASE("database sources: backend is cuda, cpu or published") {
    const std::string row = gemm("v100-sxm2", kDims, "median_s: 1e-4");
    for (const char* b : {"cuda", "cpu", "published"})
      CHECK(parse_database(head("v100-sxm2", b) + row, "db.yaml").size() == 1);
    CHECK_THROWS_WITH_AS(parse_database(head("v100-sxm2", "quantum") + row, "db.yaml"),
                         "db.yaml:4:41: error: sources[0].backend: expected cuda, cpu or "
                         "published, got \"quantum\"",
                         ConfigError);
  }

  TEST_CASE("database rows faster than their catalog GPU's peak are refused") {
    // 36 such GEMMs for an H100 fitted curves of 747,570,971 TFLOP/s (peak 989) with no warning.
    const std::string dims = "m: 4096, n: 4096, k: 4096, trans_a: 0, trans_b: 0";
    CHECK_THROWS_WITH_AS(
        parse_database(head("h100-sxm5") + gemm("h100-sxm5", dims, "median_s: 1e-9", "fp16"),
                       "db.yaml"),
        "db.yaml:6:153: error: entries[0].median_s: 1e-09 s for 1.37439e+11 FLOP is 1.374e+05 "
        "PFLOP/s, above 1.25 x the fp16 peak of 989.4 TFLOP/s (h100-sxm5): no gemm runs faster "
        "than its GPU (a time in the wrong unit?)",
        ConfigError);
    // At 80% of the dense tensor peak: accepted, also for fp32 rows (cuBLAS may use TF32).
    CHECK(parse_database(head("h100-sxm5") + gemm("h100-sxm5", dims, "median_s: 1.737e-4", "fp16"),
                         "db.yaml")
              .size() == 1);
    CHECK(parse_database(head("h100-sxm5") + gemm("h100-sxm5", dims, "median_s: 3.5e-4"), "db.yaml")
              .size() == 1);
    // Bytes beyond the memory: 1 GiB of elementwise traffic in 1 us.
    const std::string elementwise =
        "  - {source: s, device: v100-sxm2, op: elementwise, pass: fwd, dtype: fp32, select: "
        "find, dims: {elements: 134217728}, median_s: 1e-6}\n";
    CHECK_THROWS_WITH_AS(parse_database(head("v100-sxm2") + elementwise, "db.yaml"),
                         "db.yaml:6:130: error: entries[0].median_s: 1e-06 s for at least "
                         "1.07374e+09 bytes is 1074 TB/s, above 8 x the memory bandwidth of 900 "
                         "GB/s (v100-sxm2): no elementwise moves its bytes that fast (a time in "
                         "the wrong unit?)",
                         ConfigError);
    // A device the catalog does not know (a CPU, a platform's own GPU) is not checked.
    CHECK(
        parse_database(head("my-gpu") + gemm("my-gpu", dims, "median_s: 1e-9"), "db.yaml").size() ==
        1);
  }

  TEST_CASE("the committed DeepBench databases pass the physical-rate check") {
    CHECK(load_database(t::committed_db("v100-sxm2")).size() == 840);
    CHECK(load_database(t::committed_db("p100-sxm2")).size() > 0);
  }
}
