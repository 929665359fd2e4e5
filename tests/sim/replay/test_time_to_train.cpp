// Time to train (sim/time_to_train.hpp): the scenario key picks a cited convergence table, a
// point's global batch outside it is a file:line error before any simulation (unless
// extrapolate), and a point's time to train is the table's samples over its throughput; `run`
// and `sweep` report it (summary.json, sweep.csv, time_to_train.png).

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include <unistd.h>

#include "common/config_error.hpp"
#include "sim/scenario.hpp"
#include "sim/time_to_train.hpp"
#include "tests/sim/replay/test_files.hpp"

using namespace scalecast::sim;
using scalecast::common::ConfigError;
using scalecast::sim::testing::kTool;
using scalecast::sim::testing::slurp;

namespace {

const std::string kHead = R"(platform: summit
model: resnet50
batch_per_gpu: 32
)";

std::string error_of(const std::string& text) {
  try {
    load_scenario_text(text, "in.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("time_to_train: a global batch outside the table is an error at its node count") {
    // 1 node x 6 GPUs x 32 = 192, below resnet50-mlperf-v4.0's 1,632.
    const std::string e = error_of(kHead + "nodes: [9, 1]\ntime_to_train: true\n");
    INFO(e);
    CHECK(e.rfind("in.yaml:4:12: error: nodes[1]: 1 node x 6 GPUs x batch 32: global batch 192 "
                  "is below table resnet50-mlperf-v4.0 (1632 to 67840",
                  0) == 0);
    CHECK(e.find("no silent extrapolation") != std::string::npos);
    // Above: 400 nodes x 6 x 32 = 76,800 > 67,840.
    CHECK(error_of(kHead + "nodes: 400\ntime_to_train: true\n").find("is above table") !=
          std::string::npos);
    // Asked for: no error.
    const Scenario s = load_scenario_text(
        kHead + "nodes: [1, 400]\ntime_to_train: {extrapolate: true}\n", "in.yaml");
    CHECK(s.time_to_train.enabled);
    CHECK(s.time_to_train.table == "resnet50-mlperf-v4.0");
  }

  TEST_CASE("time_to_train: a table for another model or an unknown table is an error") {
    CHECK(error_of(kHead + "nodes: 9\ntime_to_train: {table: bert-mlperf-v5.1}\n") ==
          "in.yaml:5:24: error: time_to_train.table: table bert-mlperf-v5.1 is for "
          "bert_large_pretrain, bert_large, not resnet50");
    CHECK(error_of(kHead + "nodes: 9\ntime_to_train: {table: nope}\n")
              .find("time_to_train.table: no table \"nope\"") != std::string::npos);
    CHECK(error_of("platform: summit\nmodel: vgg16\nbatch_per_gpu: 32\nnodes: 9\n"
                   "time_to_train: true\n")
              .find("no convergence table for model vgg16") != std::string::npos);
  }

  TEST_CASE("time_to_train: a point's time is the table's samples over its throughput") {
    // 51 GPUs x 32 = 1,632: the table's first row exactly, 35 epochs of 1,281,167 images.
    const Scenario s = load_scenario_text(kHead + "nodes: 9\ntime_to_train: true\n", "in.yaml");
    nlohmann::ordered_json p = {
        {"nodes", 9}, {"gpus", 51}, {"batch_per_gpu", 32}, {"throughput_samples_per_s", 1e4}};
    add_time_to_train(s, p);
    CHECK(p["global_batch"].get<double>() == 1632.0);
    CHECK(p["epochs"].get<double>() == doctest::Approx(35.0).epsilon(1e-12));
    CHECK(p["time_to_train_s"].get<double>() ==
          doctest::Approx(35.0 * 1281167.0 / 1e4).epsilon(1e-12));
    CHECK(p["time_to_train"]["extrapolated"] == false);
    // Without the key a point is left alone (single-job outputs keep their bytes).
    const Scenario off = load_scenario_text(kHead + "nodes: 9\n", "in.yaml");
    nlohmann::ordered_json q = {{"gpus", 51}, {"batch_per_gpu", 32}};
    add_time_to_train(off, q);
    CHECK(q.size() == 2);
  }

  TEST_CASE("sweep: time to train in summary.json and sweep.csv, and its plot") {
    const auto dir =
        std::filesystem::temp_directory_path() / ("scalecast-ttt-" + std::to_string(::getpid()));
    const std::string cmd = kTool +
                            " --quiet sweep scenarios/summit-resnet50-time-to-train.yaml "
                            "--nodes 5,8 -j 2 --out " +
                            dir.string() + " > /dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const std::string csv = slurp(dir / "sweep.csv");
    INFO(csv);
    CHECK(csv.find(",fidelity,global_batch,epochs,samples_to_train,time_to_train_s,"
                   "time_to_train_extrapolated\n") != std::string::npos);
    CHECK(csv.find(",flow,1920,35.0271493,") != std::string::npos);  // 5 nodes x 6 x 64
    // The plot needs python3-matplotlib (as the other sweep plots do).
    if (std::filesystem::exists(dir / "scaling.png"))
      CHECK(std::filesystem::exists(dir / "time_to_train.png"));
    std::filesystem::remove_all(dir);
  }
}
