// LLM scenarios (`model:` a transformer plus `parallel:`): loading with errors at file:line,
// one point of the pipeline job priced by a roofline on a real DGX H100 platform (breakdown adds
// up, bubble and every group's traffic present, MFU within (0, 1)), and `scalecast run` end to
// end (summary.json and the Perfetto trace, byte-identical across two runs).

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/config_error.hpp"
#include "sim/llm_runner.hpp"
#include "sim/scenario.hpp"
#include "tests/sim/replay/test_files.hpp"

using namespace scalecast;
using namespace scalecast::sim;
using scalecast::common::ConfigError;
using scalecast::sim::testing::kTool;
using scalecast::sim::testing::slurp;

namespace {

// Llama 3 8B on one DGX H100: TP 2, PP 2, DP 2, 1F1B, 8 micro-batches of 1 x 2,048 tokens.
std::string llama(const std::string& extra = "", const std::string& parallel_extra = "") {
  return "platform: dgx-h100\nmodel: llama3_8b\nnodes: 1\ngpus_per_node: 8\n" + extra +
         "iterations: 1\nwarmup: 1\nnetwork: ideal\n"
         "parallel:\n  tp: 2\n  pp: 2\n  dp: 2\n  micro_batch: 1\n  global_batch: 16\n"
         "  seq_len: 2048\n  schedule: 1f1b\n  sequence_parallel: true\n" +
         parallel_extra;
}

std::string error_of(const std::string& text) {
  try {
    load_scenario_text(text, "bad.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

class RooflineCost : public calibration::CostModel {
 public:
  calibration::OpCost op_time(const models::Op& op, const platforms::GpuSpec& gpu) const override {
    const double peak = gpu.peak_flops(op.dtype, op.tensor_core);
    const double compute = peak > 0.0 ? op.flops / (0.6 * peak) : 0.0;
    const double memory = (op.bytes_read + op.bytes_written) / (0.8 * gpu.memory_bandwidth);
    return {5e-6 + std::max(compute, memory), calibration::CostTier::kDatasheet};
  }
};

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("llm scenario: a transformer with parallel loads, errors name the file and line") {
    const Scenario s = load_scenario_text(llama(), "ok.yaml");
    REQUIRE(s.llm.has_value());
    CHECK(s.llm->model.name == "llama3_8b");
    CHECK(s.llm->parallel.gpus() == 8);
    CHECK(effective_seq_len(s) == 2048);

    const std::string two_sizes = error_of(
        "platform: dgx-h100\nmodel: llama3_8b\nnodes: [1, 2]\n"
        "parallel:\n  tp: 8\n  global_batch: 8\n");
    INFO(two_sizes);
    CHECK(two_sizes.find("bad.yaml:3:") != std::string::npos);
    CHECK(two_sizes.find("one node count") != std::string::npos);

    const std::string batch = error_of(llama("batch_per_gpu: 4\n"));
    INFO(batch);
    CHECK(batch.find("bad.yaml:5:") != std::string::npos);
    CHECK(batch.find("parallel.micro_batch") != std::string::npos);

    const std::string cnn = error_of(
        "platform: dgx-h100\nmodel: resnet50\nnodes: 1\nparallel:\n  tp: 8\n  global_batch: 8\n");
    INFO(cnn);
    CHECK(cnn.find("bad.yaml:2:") != std::string::npos);
    CHECK(cnn.find("expected a transformer") != std::string::npos);

    // 8 GPUs but TP 2 x PP 2 x DP 4 = 16: parse_parallel's check, at the parallel map.
    const std::string gpus = error_of(
        "platform: dgx-h100\nmodel: llama3_8b\nnodes: 1\n"
        "parallel:\n  tp: 2\n  pp: 2\n  dp: 4\n  global_batch: 16\n");
    INFO(gpus);
    CHECK(gpus.find("bad.yaml:") != std::string::npos);
    CHECK(gpus.find("error: parallel") != std::string::npos);
  }

  TEST_CASE("llm scenario: single-job keys the pipeline job does not simulate are errors") {
    // Each was silently ignored before: the run gave the same numbers with or without it.
    // A map is reported at its first leaf (line 6), a scalar at its key (line 5).
    const std::pair<const char*, const char*> cases[] = {
        {"fixed_costs:\n  per_iteration: 1s\n", "fixed_costs.per_iteration: not used with"},
        {"input:\n  source: memory\n", "input.source: not used with"},
        {"fidelity: flow\n", "fidelity: not used with"},
        {"flow_limit_gpus: 4096\n", "flow_limit_gpus: not used with"},
        {"allreduce:\n  algorithm: tree\n", "allreduce.algorithm: not used with"},
        {"framework: pytorch\n", "framework: not used with"},
        {"time_to_train: true\n", "time_to_train: not used with"},
        {"strategy: parameter_server\n", "strategy: not used with"},
        {"trace:\n  nodes: 2\n", "trace.nodes: not used with"}};
    for (const auto& [extra, expected] : cases) {
      const std::string e = error_of(llama(extra));
      INFO(extra, " -> ", e);
      const bool map = std::string(extra).find(":\n") != std::string::npos;
      CHECK(e.find(map ? "bad.yaml:6:" : "bad.yaml:5:") != std::string::npos);
      CHECK(e.find(expected) != std::string::npos);
    }
    // The same through an override names the override.
    try {
      load_scenario_text(llama(), "ok.yaml", {{"input.source", "memory"}});
      FAIL("no error");
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find("--set input.source=memory: error: input.source") == 0);
    }
    // What the pipeline job does read is accepted.
    CHECK(load_scenario_text(llama("fidelity: wave\nstrategy: data_parallel\nseed: 3\n"
                                   "variability:\n  compute_noise: 0.1\n"),
                             "ok.yaml")
              .llm.has_value());
    // stage_gpus belongs to LLM jobs only.
    const std::string cnn = error_of(
        "platform: dgx-h100\nmodel: resnet50\nnodes: 1\nbatch_per_gpu: 32\nstage_gpus: "
        "[h100-sxm5]\n");
    INFO(cnn);
    CHECK(cnn.find("bad.yaml:5:") != std::string::npos);
    CHECK(cnn.find("stage_gpus: used only with `parallel:`") != std::string::npos);
  }

  TEST_CASE("llm scenario: one point of Llama 3 8B TP2 PP2 DP2 on a DGX H100") {
    const Scenario s = load_scenario_text(llama(), "llama.yaml");
    const RooflineCost cost;
    const LlmPointResult r = run_llm_point(s, {1, 0}, cost);
    const PipelineResult& p = r.pipeline;
    REQUIRE(p.stages.size() == 2);
    CHECK(p.iteration_time_s > 0.0);
    for (const StageBreakdown& b : p.stages) {
      CHECK(b.total() == doctest::Approx(p.iteration_time_s).epsilon(1e-9));
      CHECK(b.compute_s > 0.0);
      CHECK(b.bubble_s > 0.0);  // a 2-stage 1F1B pipeline has one bubble of tf + tb
    }
    for (const char* g : {"tp", "pp", "dp"}) {
      INFO(g);
      CHECK(p.bytes_per_iteration.count(g) == 1);
      CHECK(p.bytes_per_iteration.at(g) > 0.0);
    }
    CHECK(r.tokens_per_iteration == 16.0 * 2048);
    CHECK(r.mfu() > 0.05);
    CHECK(r.mfu() < 1.0);
    // Without recomputation the GPUs execute the model FLOPs less attention's masked half
    // (flash_attention's causal kernel): HFU is below MFU, by a few per cent at 2,048 tokens.
    CHECK(r.hfu() < r.mfu());
    CHECK(r.hfu() > 0.9 * r.mfu());
    CHECK(r.stage_gpu[0] == r.stage_gpu[1]);
    CHECK(r.memory.size() == 2);
  }

  TEST_CASE("llm scenario: compute noise and stragglers slow the step, reproducibly by seed") {
    // Llama 3 8B TP2 PP2 DP2 through `scalecast run` (one engine per process): with variability
    // both DP replicas are simulated; stragglers at twice the compute time slow the step, the
    // same seed gives the same bytes, another seed other draws; summary.json says how many ranks
    // straggled and how many replicas ran.
    const auto base = std::filesystem::temp_directory_path() /
                      ("scalecast-llm-var-" + std::to_string(::getpid()));
    std::filesystem::create_directories(base);
    const std::string noisy =
        "variability:\n  compute_noise: 0.05\n  stragglers: 0.25\n  straggler_slowdown: 2\n";
    const auto run = [&](const std::string& name, const std::string& extra) {
      {
        std::ofstream f(base / (name + ".yaml"));
        f << llama(extra);
      }
      const std::string cmd = kTool + " --quiet run " + (base / (name + ".yaml")).string() +
                              " --out " + (base / name).string() + " > /dev/null";
      REQUIRE(std::system(cmd.c_str()) == 0);
      return slurp(base / name / "summary.json");
    };
    const std::string plain = run("plain", ""), a = run("a", "seed: 11\n" + noisy),
                      b = run("b", "seed: 11\n" + noisy), c = run("c", "seed: 12\n" + noisy);
    // The same but for the scenario's name (its file's).
    const auto unnamed = [](const std::string& text) {
      auto j = nlohmann::json::parse(text);
      j.erase("scenario");
      return j.dump();
    };
    CHECK(unnamed(a) == unnamed(b));
    CHECK(unnamed(a) != unnamed(c));
    const auto jp = nlohmann::json::parse(plain);
    CHECK(!jp.contains("variability"));
    int stragglers = 0;
    for (const std::string* text : {&a, &c}) {
      const auto j = nlohmann::json::parse(*text);
      INFO(j["variability"].dump());
      CHECK(j["variability"]["replicas_simulated"] == 2);
      CHECK(j["variability"]["straggler_slowdown"] == 2.0);
      const int n = j["variability"]["straggler_ranks"].get<int>();
      stragglers += n;
      // The step is paced by the slowest rank: 2x compute where one straggles, never faster.
      const double ratio =
          j["iteration_time_s"].get<double>() / jp["iteration_time_s"].get<double>();
      CHECK(ratio > (n > 0 ? 1.5 : 1.0));
    }
    CHECK(stragglers > 0);
    std::filesystem::remove_all(base);
  }

  TEST_CASE("llm run: scalecast run writes the LLM summary and a per-stage trace, identically") {
    const auto base =
        std::filesystem::temp_directory_path() / ("scalecast-llm-" + std::to_string(::getpid()));
    std::filesystem::create_directories(base);
    {
      std::ofstream f(base / "llama.yaml");
      f << llama();
    }
    for (const char* run : {"a", "b"}) {
      const std::string cmd = kTool + " --quiet run " + (base / "llama.yaml").string() + " --out " +
                              (base / run).string() + " > " + (base / run).string() + ".txt";
      REQUIRE(std::system(cmd.c_str()) == 0);
    }
    for (const char* f : {"summary.json", "trace.json", "iterations.csv"}) {
      const std::string a = slurp(base / "a" / f), b = slurp(base / "b" / f);
      INFO(f);
      CHECK(!a.empty());
      CHECK(a == b);
    }
    const auto j = nlohmann::json::parse(slurp(base / "a" / "summary.json"));
    CHECK(j["gpus"] == 8);
    CHECK(j["parallel"]["tp"] == 2);
    CHECK(j["throughput_tokens_per_s"].get<double>() > 0.0);
    CHECK(j["mfu"].get<double>() > 0.0);
    CHECK(j["flops"]["mfu_formula"].get<std::string>().find("3 x forward") != std::string::npos);
    for (const char* k : {"compute_s", "bubble_s", "exposed_tp_s", "exposed_pp_s", "exposed_dp_s",
                          "exposed_cp_s", "optimizer_s"})
      CHECK(j["breakdown"].contains(k));
    CHECK(j["stages"].size() == 2);
    CHECK(j["stages"][0]["memory"]["total_bytes"].get<double>() > 0.0);
    const std::string trace = slurp(base / "a" / "trace.json");
    CHECK(trace.find("stage000") != std::string::npos);
    CHECK(trace.find("stage001") != std::string::npos);
    const std::string table = slurp(base.string() + "/a.txt");
    INFO(table);
    CHECK(table.find("tokens/s") != std::string::npos);
    CHECK(table.find("bottleneck: stage") != std::string::npos);
    std::filesystem::remove_all(base);
  }

  TEST_CASE("llm placement: stage_gpus puts each stage on its GPU type and names the bottleneck") {
    // Llama 3 8B, TP 8 (one DGX per stage), PP 2: stage 0 on an A100 node, stage 1 on a V100
    // node of the heterogeneous machine. The V100 stage computes slower: it is the bottleneck.
    const std::string text =
        "platform: hetero-v100-a100\nmodel: llama3_8b\nnodes: 2\ngpus_per_node: 8\n"
        "placement: spread\niterations: 1\nwarmup: 0\nnetwork: ideal\n"
        "stage_gpus: [a100-sxm4-80gb, v100-sxm2]\n"
        "parallel:\n  tp: 8\n  pp: 2\n  micro_batch: 1\n  global_batch: 8\n  seq_len: 2048\n"
        "  precision: fp16\n";
    const Scenario s = load_scenario_text(text, "hetero.yaml");
    const RooflineCost cost;
    const LlmPointResult r = run_llm_point(s, {2, 0}, cost);
    REQUIRE(r.stage_gpu.size() == 2);
    CHECK(r.stage_gpu[0] == "a100-sxm4-80gb");
    CHECK(r.stage_gpu[1] == "v100-sxm2");
    CHECK(r.bottleneck_stage == 1);
    INFO("stage compute: " << r.pipeline.stages[0].compute_s << " s (A100), "
                           << r.pipeline.stages[1].compute_s << " s (V100)");
    CHECK(r.pipeline.stages[1].compute_s > 1.5 * r.pipeline.stages[0].compute_s);
    CHECK(r.peak_basis.find("v100-sxm2") != std::string::npos);  // MFU against the slowest GPU

    const std::string count = error_of(
        "platform: hetero-v100-a100\nmodel: llama3_8b\nnodes: 2\ngpus_per_node: 8\n"
        "stage_gpus: [v100-sxm2]\nparallel:\n  tp: 8\n  pp: 2\n  global_batch: 8\n"
        "  precision: fp16\n");
    INFO(count);
    CHECK(count.find("bad.yaml:5:") != std::string::npos);
    CHECK(count.find("one GPU type per pipeline stage") != std::string::npos);
  }

  TEST_CASE("llm placement: stages stage_gpus cannot place are errors at load, at the key") {
    // Each failed in the point's process when the runner placed the ranks (exit 4, no place).
    const std::string head =
        "platform: hetero-v100-a100\nmodel: llama3_8b\ngpus_per_node: 8\n"
        "stage_gpus: [v100-sxm2, a100-sxm4-80gb]\nmemory_check: false\n";
    const std::string par = "parallel:\n  pp: 2\n  micro_batch: 1\n  precision: fp16\n";
    CHECK(error_of(head + "nodes: 2\n" + par + "  tp: 8\n  global_batch: 8\n" +
                   "  order: [pp, tp, cp, dp]\n") ==
          "bad.yaml:13:10: error: parallel.order: stage_gpus puts each pipeline stage on its own "
          "nodes: pp must be the outermost (last) dimension of parallel.order");
    CHECK(error_of(head + "nodes: 1\n" + par + "  tp: 4\n  global_batch: 8\n") ==
          "bad.yaml:4:13: error: stage_gpus: stage_gpus puts each pipeline stage on whole nodes: "
          "tp x cp x dp = 4 GPUs per stage is not a multiple of the 8 GPUs per node");
    CHECK(error_of(head + "nodes: 20\ncluster: {nodes: 20}\n" + par +
                   "  tp: 8\n  dp: 10\n  global_batch: 10\n") ==
          "bad.yaml:4:13: error: stage_gpus: the stages on v100-sxm2 need 10 nodes of it (80 GPUs "
          "a stage, 8 per node), but hetero-v100-a100 has 4 (cluster.nodes and cluster.partition "
          "size the machine)");
    CHECK(error_of(head + "nodes: 2\n" + par + "  tp: 8\n  global_batch: 8\n") == "no error");
  }

  TEST_CASE("llm scenario: a precision a GPU has no tensor-core peak for is an error at load") {
    // fp8 on Summit's V100s stopped the run in the cost model (exit 4): "GPU 'v100-sxm2' has no
    // fp8 tensor-core peak ...". It is an input error at parallel.precision.
    const std::string summit = error_of(
        "platform: summit\nmodel: gpt3_1p7b\nnodes: 2\ngpus_per_node: 6\n"
        "parallel:\n  tp: 6\n  pp: 2\n  global_batch: 8\n  precision: fp8\n");
    CHECK(summit ==
          "bad.yaml:9:14: error: parallel.precision: expected a precision with a tensor-core peak "
          "on every GPU the job may run on: v100-sxm2, v100-sxm2-32gb of summit have no fp8 "
          "tensor-core peak (use bf16 or fp16), got \"fp8\"");
    // A heterogeneous job: the stage on the V100 lacks it, the A100 (no FP8 either) too.
    const std::string hetero = error_of(
        "platform: hetero-v100-a100\nmodel: llama3_8b\nnodes: 2\ngpus_per_node: 8\n"
        "stage_gpus: [a100-sxm4-80gb, v100-sxm2]\n"
        "parallel:\n  tp: 8\n  pp: 2\n  global_batch: 8\n  precision: fp8\n");
    INFO(hetero);
    CHECK(hetero.find("bad.yaml:10:14: error: parallel.precision:") == 0);
    CHECK(hetero.find("v100-sxm2, a100-sxm4-80gb of hetero-v100-a100 have no fp8") !=
          std::string::npos);
    // bf16 on a V100 is emulated at its fp32 rate (platforms/gpu_spec.hpp), fp16 native: loads.
    for (const char* p : {"bf16", "fp16"})
      CHECK(error_of("platform: summit\nmodel: gpt3_1p7b\nnodes: 2\ngpus_per_node: 6\n"
                     "parallel:\n  tp: 6\n  pp: 2\n  global_batch: 8\n  precision: " +
                     std::string(p) + "\n") == "no error");
  }

  TEST_CASE("llm sweep: one point per combination and node count, the pipeline job's columns") {
    // Before, a sweep of an LLM scenario planned 1-GPU and 1-node baselines and died in the
    // first of them (exit 4: "1 nodes x 1 GPUs is not tp x pp x cp x dp").
    const auto base = std::filesystem::temp_directory_path() /
                      ("scalecast-llm-sweep-" + std::to_string(::getpid()));
    std::filesystem::create_directories(base);
    {
      std::ofstream f(base / "llama.yaml");  // dp follows the node count
      f << "platform: dgx-h100\nmodel: llama3_8b\nnodes: 1\ngpus_per_node: 4\n"
           "iterations: 1\nwarmup: 1\nnetwork: ideal\nparallel:\n  tp: 2\n  pp: 2\n"
           "  micro_batch: 1\n  global_batch: 16\n  seq_len: 2048\n  schedule: 1f1b\n";
    }
    const std::string scenario = (base / "llama.yaml").string();
    const std::string sweep = kTool + " --quiet sweep " + scenario +
                              " --nodes 1,2 --axis parallel.tp=1,2 -j 2 --out " +
                              (base / "sw").string() + " > /dev/null 2>&1";
    REQUIRE(std::system(sweep.c_str()) == 0);
    std::ifstream points(base / "sw" / "points.jsonl");
    int planned = 0;
    for (std::string line; std::getline(points, line);) {
      ++planned;
      CHECK(nlohmann::json::parse(line)["role"] == "point");  // no baselines
    }
    CHECK(planned == 4);
    std::ifstream csv(base / "sw" / "sweep.csv");
    std::string header, row;
    std::getline(csv, header);
    CHECK(header.rfind("parallel.tp,nodes,gpus,iteration_time_s,throughput_tokens_per_s,"
                       "tokens_per_s_per_gpu,mfu,hfu,compute_s,",
                       0) == 0);
    std::vector<std::string> rows;
    while (std::getline(csv, row)) rows.push_back(row);
    REQUIRE(rows.size() == 4);
    CHECK(rows[3].rfind("2,2,8,", 0) == 0);  // tp 2 on 2 nodes: 8 GPUs
    // The point is the run of the same configuration.
    const std::string run = kTool + " --quiet run " + scenario +
                            " --set nodes=2 --set parallel.tp=2 --out " + (base / "run").string() +
                            " > /dev/null 2>&1";
    REQUIRE(std::system(run.c_str()) == 0);
    const auto j = nlohmann::json::parse(slurp(base / "run" / "summary.json"));
    const std::string t = rows[3].substr(6, rows[3].find(',', 6) - 6);
    CHECK(std::stod(t) == doctest::Approx(j["iteration_time_s"].get<double>()).epsilon(1e-8));
    // A combination whose parallel map cannot hold at a node count is refused before any point.
    const std::string bad = kTool + " --quiet sweep " + scenario +
                            " --nodes 1 --axis parallel.pp=3 --out " + (base / "bad").string() +
                            " > " + (base / "bad.txt").string() + " 2>&1";
    CHECK(WEXITSTATUS(std::system(bad.c_str())) == 1);
    const std::string msg = slurp(base / "bad.txt");
    INFO(msg);
    CHECK(msg.find("parallel.pp") != std::string::npos);
    CHECK(!std::filesystem::exists(base / "bad" / "results"));
    std::filesystem::remove_all(base);
  }
}
