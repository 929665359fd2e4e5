// Epochs-to-target tables (calibration/convergence.hpp) against their cited sources: the
// committed calibration/data/convergence/convergence.yaml reproduces the MLPerf RCP checker's
// statistic and Goyal et al.'s rows exactly, interpolation between rows is linear and monotone, and
// a batch outside the table is an error unless extrapolation is asked for.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "calibration/convergence.hpp"
#include "common/config_error.hpp"

using namespace scalecast::calibration;
using scalecast::common::ConfigError;

namespace {

ConvergenceData committed() {
  return load_convergence(std::string(SCALECAST_SOURCE_DIR) +
                          "/calibration/data/convergence/convergence.yaml");
}

std::string load_error(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("scalecast-convergence-" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream f(path);
    f << text;
  }
  std::string what = "no error";
  try {
    load_convergence(path.string());
  } catch (const ConfigError& e) {
    what = e.message() + " @" + std::to_string(e.line()) + " " + e.key_path();
  }
  std::filesystem::remove(path);
  return what;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("convergence: the MLPerf ResNet-50 rows are the RCP checker's olympic means") {
    const ConvergenceData d = committed();
    const ConvergenceTable* t = d.for_model("resnet50");
    REQUIRE(t != nullptr);
    CHECK(t->name == "resnet50-mlperf-v4.0");  // the default for resnet50
    CHECK(t->epochs);
    CHECK(t->dataset_samples == 1281167.0);  // ILSVRC2012 training images
    // mlcommons/logging training_4.0.0/rcps_resnet.json: resnet_ref_3264 has 15 runs
    // [35, 35, 35, 35, 35, 35, 35, 35, 35, 35, 35, 35, 35, 37, 36] in some order: sorted, the
    // fastest and the slowest dropped, the mean of 13; resnet_ref_32768 ten runs of mean 56.
    for (const auto& [batch, epochs] :
         std::vector<std::pair<double, double>>{{1632, 35.0},
                                                {3264, 35.15384615},
                                                {32768, 56.0},
                                                {49152, 68.0},
                                                {67840, 85.84615385}}) {
      const TrainingAmount a = training_amount(*t, batch, false);
      INFO("batch " << batch << ": expected " << epochs << " epochs, actual " << a.epochs);
      CHECK(a.epochs == doctest::Approx(epochs).epsilon(1e-9));
      CHECK(a.samples == doctest::Approx(epochs * 1281167.0).epsilon(1e-9));
      CHECK(!a.extrapolated);
    }
  }

  TEST_CASE("convergence: Goyal et al. 2017 and the MLPerf BERT rows reproduce exactly") {
    const ConvergenceData d = committed();
    const ConvergenceTable* g = d.find("resnet50-goyal2017");
    REQUIRE(g != nullptr);
    CHECK(training_amount(*g, 256, false).epochs == 90.0);
    CHECK(training_amount(*g, 8192, false).epochs == 90.0);
    CHECK(training_amount(*g, 4096, false).epochs == 90.0);  // flat between the two rows
    const ConvergenceTable* b = d.for_model("bert_large_pretrain");
    REQUIRE(b != nullptr);
    CHECK(!b->epochs);
    // training_5.1.0/rcps_bert.json bert_ref_4608: 20 runs, olympic mean 2,798,080 samples.
    const TrainingAmount a = training_amount(*b, 4608, false);
    CHECK(a.samples == doctest::Approx(2798080.0).epsilon(1e-12));
    CHECK(a.epochs == 0.0);
  }

  TEST_CASE("convergence: between rows linear and monotone, every shipped table non-decreasing") {
    const ConvergenceData d = committed();
    const ConvergenceTable* t = d.find("resnet50-mlperf-v4.0");
    REQUIRE(t != nullptr);
    // Halfway between 3264 (35.1538) and 32768 (56): the mean of the two.
    CHECK(training_amount(*t, (3264.0 + 32768.0) / 2, false).epochs ==
          doctest::Approx((35.15384615 + 56.0) / 2).epsilon(1e-9));
    for (const ConvergenceTable& table : d.tables) {
      double last = 0.0;
      const double lo = table.rows.front().global_batch, hi = table.rows.back().global_batch;
      for (int i = 0; i <= 1000; ++i) {
        const double b = lo + (hi - lo) * i / 1000.0;
        const double v = training_amount(table, b, false).samples;
        INFO(table.name << " at batch " << b << ": " << v << " samples after " << last);
        CHECK(v >= last);
        last = v;
      }
    }
  }

  TEST_CASE("convergence: beyond the table is an error unless extrapolation is asked for") {
    const ConvergenceData d = committed();
    const ConvergenceTable* t = d.find("resnet50-mlperf-v4.0");
    REQUIRE(t != nullptr);
    CHECK_THROWS_AS(training_amount(*t, 67841, false), std::out_of_range);
    CHECK_THROWS_AS(training_amount(*t, 1536, false), std::out_of_range);  // one Summit node
    try {
      training_amount(*t, 100000, false);
    } catch (const std::out_of_range& e) {
      CHECK(std::string(e.what()).find("global batch 100000 is above table resnet50-mlperf-v4.0 "
                                       "(1632 to 67840") == 0);
    }
    // Asked for: the line through the last two rows, marked.
    const TrainingAmount a = training_amount(*t, 86528, true);
    const double slope = (85.84615385 - 68.0) / (67840.0 - 49152.0);
    CHECK(a.extrapolated);
    CHECK(a.epochs == doctest::Approx(85.84615385 + slope * (86528.0 - 67840.0)).epsilon(1e-9));
    const TrainingAmount below = training_amount(*t, 1536, true);
    CHECK(below.extrapolated);
    CHECK(below.epochs == 35.0);
  }

  TEST_CASE("convergence: above a table whose last rows fall the amount holds, never negative") {
    namespace fs = std::filesystem;
    const fs::path path = fs::temp_directory_path() / "scalecast_convergence_falling.yaml";
    {
      std::ofstream f(path);
      f << "format: scalecast-convergence-1\ntables:\n  - name: t\n    models: [m]\n"
           "    unit: epochs\n    dataset: d\n    dataset_samples: 100\n    target: x\n"
           "    source: s\n    rows:\n      - {global_batch: 100, value: 100, source: a}\n"
           "      - {global_batch: 200, value: 1, source: a}\n";
    }
    const ConvergenceData d = load_convergence(path.string());
    fs::remove(path);
    const ConvergenceTable* t = d.find("t");
    REQUIRE(t != nullptr);
    // The line through (100, 100) and (200, 1) would give -1,700 epochs at batch 1,920.
    const TrainingAmount a = training_amount(*t, 1920, true);
    CHECK(a.extrapolated);
    CHECK(a.epochs == 1.0);
    CHECK(a.samples == 100.0);
  }

  TEST_CASE("convergence: a malformed table is an error at its key") {
    const std::string head =
        "format: scalecast-convergence-1\ntables:\n  - name: t\n"
        "    models: [m]\n    unit: epochs\n    dataset: d\n"
        "    dataset_samples: 100\n    target: x\n    source: s\n";
    CHECK(load_error(head + "    rows:\n      - {global_batch: 512, value: 2, source: a}\n"
                            "      - {global_batch: 256, value: 3, source: b}\n") ==
          "expected a batch above the previous row's 512 (rows in order) @12 "
          "tables[0].rows[1].global_batch");
    // A batch is whole samples: 1000.5 was accepted and interpolated.
    CHECK(load_error(head + "    rows:\n      - {global_batch: 1000.5, value: 2, source: a}\n")
              .find("expected a whole number from 1 to 1,000,000,000, got \"1000.5\"") == 0);
    CHECK(load_error(head + "    rows:\n      - {global_batch: 512, value: -2, source: a}\n")
              .find("expected a positive number") == 0);
    INFO(load_error(head + "    rows:\n      - {global_batch: 512, value: 2}\n"));
    CHECK(load_error(head + "    rows:\n      - {global_batch: 512, value: 2}\n").find("source") !=
          std::string::npos);
  }
}
