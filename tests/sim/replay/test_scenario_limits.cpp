// Scenario numbers are read as what they are, with stated limits (issue 14): counts as integers
// (no truncation, no silent clamp to the node's GPUs), quantities within physical ranges, trace
// indices that exist, memory that fits the GPU, and `--set` errors that name the override.

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/cost_model.hpp"
#include "common/config_error.hpp"
#include "models/zoo.hpp"
#include "platforms/platform.hpp"
#include "sim/cluster.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_runner.hpp"

using namespace scalecast::sim;
using scalecast::common::ConfigError;

namespace {

const char* kBase = R"(name: t
platform: summit
model: resnet50
nodes: [1, 4]
)";

std::string error_of(const std::string& text, std::vector<std::string> sets = {}) {
  try {
    load_scenario_text(text, "in.yaml", parse_overrides(sets));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::string set_error(const std::string& set) { return error_of(kBase, {set}); }
std::string set_error(const std::string& first, const std::string& second) {
  return error_of(kBase, {first, second});
}

// Prices the op named `bad` at `value`, every other op at 1 ms (a cost model gone wrong).
class BrokenCostModel : public scalecast::calibration::CostModel {
 public:
  BrokenCostModel(std::string bad, double value) : bad_(std::move(bad)), value_(value) {}
  scalecast::calibration::OpCost op_time(const scalecast::models::Op& op,
                                         const scalecast::platforms::GpuSpec&) const override {
    return {op.name == bad_ ? value_ : 1e-3, scalecast::calibration::CostTier::kFitted};
  }

 private:
  std::string bad_;
  double value_;
};

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("gpus_per_node beyond the node's GPUs is an error naming the count") {
    CHECK(set_error("gpus_per_node=7") ==
          "--set gpus_per_node=7: error: gpus_per_node: expected at most 6: a summit node "
          "(ac922) has 6 GPUs, got 7");
    CHECK(error_of(std::string(kBase) + "gpus_per_node: 7\n") ==
          "in.yaml:5:16: error: gpus_per_node: expected at most 6: a summit node (ac922) has 6 "
          "GPUs, got 7");
    CHECK(load_scenario_text(std::string(kBase) + "gpus_per_node: 6\n", "in.yaml").gpus_per_node ==
          6);
  }

  TEST_CASE("counts that do not fit are errors stating the limit, not truncated") {
    CHECK(set_error("gpus_per_node=4294967297") ==
          "--set gpus_per_node=4294967297: error: gpus_per_node: expected at most 1,000,000 (a "
          "whole number from 0 to 1,000,000), got 4294967297");
    CHECK(set_error("warmup=4294967295") ==
          "--set warmup=4294967295: error: warmup: expected at most 100 (a whole number from 0 "
          "to 100), got 4294967295");
    CHECK(set_error("warmup=2147483648") ==
          "--set warmup=2147483648: error: warmup: expected at most 100 (a whole number from 0 "
          "to 100), got 2147483648");
    CHECK(set_error("iterations=99999999999999999999") ==
          "--set iterations=99999999999999999999: error: iterations: expected at most 1,000 (a "
          "whole number from 1 to 1,000), got 99999999999999999999");
    // A run keeps every iteration's records: a million iterations ran out of memory after a
    // minute and a million warm-up iterations ran for minutes (CLI fuzzing, 6 Dec).
    CHECK(set_error("iterations=1001") ==
          "--set iterations=1001: error: iterations: expected at most 1,000 (a whole number from "
          "1 to 1,000), got 1001");
    CHECK(load_scenario_text(kBase, "in.yaml", parse_overrides({"iterations=1000", "warmup=100"}))
              .iterations == 1000);
    CHECK(set_error("allreduce.bucketing=packs", "allreduce.packs=1025")
              .find("allreduce.packs: expected at most 1,024") != std::string::npos);
    CHECK(set_error("allreduce.algorithm=tree", "allreduce.chunks=65")
              .find("allreduce.chunks: expected at most 64") != std::string::npos);
    // Each node count is one point folder: a repeated one ran twice into it.
    CHECK(set_error("nodes=[1,4,1]") ==
          "--set nodes=[1,4,1]: error: nodes[2]: 1 is already listed at nodes[0]; each node count "
          "is one point");
    CHECK(set_error("trace.node_list=[0,0]") ==
          "--set trace.node_list=[0,0]: error: trace.node_list[1]: node index 0 is already listed "
          "at node_list[0]");
    CHECK(set_error("nodes=[1,0]") ==
          "--set nodes=[1,0]: error: nodes[1]: expected at least 1 (a whole number from 1 to "
          "1,000,000), got 0");
  }

  TEST_CASE("sizes beyond their stated limit are errors, not overflowed") {
    CHECK(set_error("input.sample_size=1e17B") ==
          "--set input.sample_size=1e17B: error: input.sample_size: expected a size of at least "
          "1 B and at most 8 GiB, got \"1e17B\"");
    CHECK(error_of(std::string(kBase) + "input: {source: pfs, stored_sample_size: 1e20B}\n") ==
          "in.yaml:5:42: error: input.stored_sample_size: expected a size of at least 1 B and "
          "at most 8 GiB, got \"1e20B\"");
    // Buffers are 0 (none) or whole bytes.
    CHECK(set_error("allreduce.fusion_buffer=0.5B") ==
          "--set allreduce.fusion_buffer=0.5B: error: allreduce.fusion_buffer: expected 0 or at "
          "least 1 B, got \"0.5B\"");
    CHECK(set_error("allreduce.bucketing=ddp", "allreduce.first_bucket=1e-300B")
              .find("allreduce.first_bucket: expected 0 or at least 1 B") != std::string::npos);
  }

  TEST_CASE("an absurd all-reduce cycle time is an error stating the limit") {
    CHECK(set_error("allreduce.cycle_time=1e9s") ==
          "--set allreduce.cycle_time=1e9s: error: allreduce.cycle_time: expected a time of at "
          "least 0 s and at most 1 s, got \"1e9s\"");
  }

  TEST_CASE("a trace node index no point has is an error") {
    CHECK(set_error("trace.node_list=[0,4]") ==
          "--set trace.node_list=[0,4]: error: trace.node_list[1]: node index 4 does not exist: "
          "the largest point has 4 nodes (indices 0 to 3)");
    const Scenario s =
        load_scenario_text(kBase, "in.yaml", parse_overrides({"trace.node_list=[0,3]"}));
    CHECK(trace_nodes_for(s, 4) == std::vector<int>{0, 3});
    CHECK(trace_nodes_for(s, 1) == std::vector<int>{0});
  }

  TEST_CASE("--set errors name the override, and a malformed value is an error") {
    CHECK(set_error("warmup=abc") ==
          "--set warmup=abc: error: warmup: expected a whole number from 0 to 100, got \"abc\"");
    CHECK(
        set_error("nodes=[1,2").rfind("--set nodes=[1,2: error: nodes: expected a YAML value", 0) ==
        0);
    CHECK(set_error("warmpu=1") ==
          "--set warmpu=1: error: warmpu: unknown key (did you mean 'warmup'?)");
    CHECK(error_of(kBase, {"=1"}) ==
          "--set =1: error: expected key.path=value, e.g. --set allreduce.algorithm=ring");
    CHECK(error_of(kBase, {"allreduce..cycle_time=1ms"}).find("expected key.path=value") !=
          std::string::npos);
    // An error in the file itself still points at the file.
    CHECK(error_of(std::string(kBase) + "warmup: x\n", {"iterations=3"}) ==
          "in.yaml:5:9: error: warmup: expected a whole number from 0 to 100, got \"x\"");
  }

  TEST_CASE("--set indexes into lists and refuses paths through lists and values it cannot take") {
    // A number after a list is an index: the item changes, the list stays a list.
    const Scenario s = load_scenario_text(kBase, "in.yaml", parse_overrides({"nodes.1=8"}));
    CHECK(s.nodes == std::vector<int>{1, 8});
    // Before, a list or value on the path became a map and the error blamed the file's line.
    const std::pair<const char*, const char*> refused[] = {
        {"nodes.2=8", "nodes: is a list of 2 items: expected an index from 0 to 1, got \"2\""},
        {"nodes.first=8",
         "nodes: is a list of 2 items: expected an index from 0 to 1, got \"first\""},
        {"nodes.0.x=8",
         "nodes[0]: is a value (1), not a map or a list: there is no \"x\" inside it"},
        {"model.depth=50",
         "model: is a value (resnet50), not a map or a list: there is no \"depth\" inside it"},
    };
    for (const auto& [set, message] : refused)
      CHECK(set_error(set) == std::string("--set ") + set + ": error: " + message);
    CHECK(error_of(std::string(kBase) + "trace_nodes: []\n", {"trace_nodes.0=1"}) ==
          "--set trace_nodes.0=1: error: trace_nodes: is an empty list: there is no item \"0\" "
          "in it");
    CHECK(set_error("jobs.0.nodes=2") ==
          "--set jobs.0.nodes=2: error: jobs: is not in the scenario: there is no list to take "
          "item \"0\" of");
    // New map keys are still created, and an error in a listed item names the override.
    CHECK(error_of(kBase, {"allreduce.cycle_time=1ms"}) == "no error");
    CHECK(set_error("nodes.1=0") ==
          "--set nodes.1=0: error: nodes[1]: expected at least 1 (a whole number from 1 to "
          "1,000,000), got 0");
  }

  TEST_CASE("a node count an override gave is blamed on the override in later checks") {
    // Before, the parent's node-count check printed "in.yaml:1:2: error: nodes[0]: ...": the
    // line and column inside the override's text, under the scenario's file name.
    const Scenario s =
        load_scenario_text(kBase, "in.yaml", parse_overrides({"nodes=[2]", "cluster.nodes=1"}));
    REQUIRE(s.nodes_at.size() == 1);
    CHECK(s.nodes_at[0].file == "--set nodes=[2]");
    CHECK(s.nodes_at[0].line == 0);
    try {
      check_node_counts(s, s.nodes);
      FAIL("expected an error");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).rfind("--set nodes=[2]: error: nodes[0]: the point asks for 2 "
                                        "nodes but cluster.nodes makes summit 1 nodes",
                                        0) == 0);
    }
    // Keys from the file keep the file's place.
    const Scenario file = load_scenario_text(kBase, "in.yaml", parse_overrides({"warmup=2"}));
    CHECK(file.nodes_at.at(1).file == "in.yaml");
    CHECK(file.nodes_at.at(1).line == 4);
  }

  TEST_CASE("a model that does not fit the GPU's memory is an error saying by how much") {
    const std::string e = error_of(
        "platform: dgx1-v100\nmodel: gpt2_xl\nprecision: fp32\nbatch_per_gpu: 32\nnodes: 1\n");
    INFO(e);
    CHECK(e.rfind("in.yaml:4:16: error: batch_per_gpu: gpt2_xl at batch 32 per GPU in fp32 needs ",
                  0) == 0);
    CHECK(e.find("the v100-sxm2 (dgx1-v100 node dgx1v) has 14.9 GiB") != std::string::npos);
    CHECK(e.find("GiB too much; lower batch_per_gpu or the precision") != std::string::npos);
    // Replaying a measured run may switch the check off (validation does).
    CHECK(error_of("platform: dgx1-v100\nmodel: gpt2_xl\nprecision: fp32\nbatch_per_gpu: 32\n"
                   "nodes: 1\nmemory_check: false\n") == "no error");
  }

  TEST_CASE("every shipped scenario fits its GPUs' memory") {
    int n = 0;
    for (const auto& f :
         std::filesystem::directory_iterator(std::string(SCALECAST_SOURCE_DIR) + "/scenarios")) {
      if (f.path().extension() != ".yaml") continue;
      INFO(f.path().string());
      CHECK_NOTHROW(load_scenario(f.path().string()));
      ++n;
    }
    CHECK(n >= 4);
  }

  TEST_CASE("an op priced at NaN, infinity or a negative time is an error naming the op") {
    const scalecast::models::Model m = scalecast::models::load_model("resnet50");
    Scenario sc;
    sc.batch_per_gpu = 2;
    const auto step = scenario_step(sc, m);
    const auto gpu = scalecast::platforms::load_platform("summit").node_types[0].gpu;
    const std::string op = step.ops()[3].name;
    for (double bad : {std::nan(""), HUGE_VAL, -1.0}) {
      try {
        build_program(step, BrokenCostModel(op, bad), gpu, 2, 0.0);
        FAIL("no error for " << bad);
      } catch (const std::invalid_argument& e) {
        INFO(e.what());
        CHECK(std::string(e.what()).rfind("op " + op +
                                              " on v100-sxm2: the cost model (fitted tier) "
                                              "gave a duration of ",
                                          0) == 0);
      }
    }
    CHECK(build_program(step, BrokenCostModel(op, 2e-3), gpu, 2, 0.0).ops[3].duration_s == 2e-3);
  }
}
