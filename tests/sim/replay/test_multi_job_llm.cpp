// LLM jobs in a `jobs:` scenario (sim/multi_job_scenario.hpp): one runs in a mix as it runs
// alone, with its LLM figures and files, and its size and the file's data-parallel defaults
// are errors at their keys. Split from test_multi_job_scenario.cpp.

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "common/config_error.hpp"
#include "sim/multi_job_scenario.hpp"
#include "sim/scenario.hpp"
#include "tests/sim/replay/test_files.hpp"

using namespace scalecast::sim;
using scalecast::common::ConfigError;
using scalecast::sim::testing::kTool;
using scalecast::sim::testing::slurp;

namespace {

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    load_scenario_text(text, "in.yaml", parse_overrides(sets));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("run: an LLM job in a mix runs as it runs alone, with its LLM figures and files") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("scalecast-mix-llm-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string llm = R"(model: llama3_8b
    parallel: {tp: 8, pp: 2, dp: 2, micro_batch: 1, global_batch: 16, seq_len: 4096}
)";
    {
      std::ofstream f(dir / "mix.yaml");
      f << "platform: dgx-h100-superpod\ncluster: {nodes: 8}\niterations: 1\njobs:\n"
        << "  - name: llm\n    node_list: [0, 1, 2, 3]\n    " << llm
        << "  - {name: cnn, model: resnet50, precision: fp16, batch_per_gpu: 64, nodes: 2}\n";
      std::ofstream g(dir / "single.yaml");
      g << "name: llm\nplatform: dgx-h100-superpod\ncluster: {nodes: 8}\niterations: 1\nnodes: "
           "4\n"
        << llm.substr(0, llm.find('\n') + 1)
        << "parallel:" << llm.substr(llm.find("parallel:") + 9);
    }
    const auto run = [&](const std::string& file, const std::string& out) {
      const std::string cmd = "cd " + dir.string() + " && " + kTool + " --quiet run " + file +
                              " --out " + out + " > /dev/null 2> err.txt";
      return std::system(cmd.c_str());
    };
    REQUIRE(run("mix.yaml", "mix") == 0);
    REQUIRE(run("single.yaml", "single") == 0);
    const auto mix = nlohmann::json::parse(slurp(dir / "mix" / "summary.json"));
    const auto single = nlohmann::json::parse(slurp(dir / "single" / "summary.json"));
    REQUIRE(mix["jobs"].size() == 2);
    const auto& j = mix["jobs"][0];
    INFO(j.dump());
    CHECK(j["kind"] == "training");
    CHECK(j["parallel"]["tp"] == 8);
    CHECK(j["gpus"] == 32);
    // Same nodes, same machine, nothing shared: the single run's figures to the last bit.
    CHECK(j["iteration_time_s"] == single["iteration_time_s"]);
    CHECK(j["alone"]["iteration_time_s"] == single["iteration_time_s"]);
    CHECK(j["mfu"] == single["mfu"]);
    CHECK(j["slowdown"].get<double>() == 1.0);
    CHECK(mix["jobs"][1]["model"] == "resnet50");
    CHECK(!slurp(dir / "mix" / "jobs" / "llm" / "trace.json").empty());
    CHECK(!slurp(dir / "mix" / "jobs" / "llm" / "iterations.csv").empty());
    // One timeline of the mix: each job's processes, renumbered and named after the job.
    const auto trace = nlohmann::json::parse(slurp(dir / "mix" / "trace.json"));
    std::map<int, std::string> process;
    std::size_t events = 0;
    for (const auto& e : trace["traceEvents"]) {
      ++events;
      if (e["name"] == "process_name") process[e["pid"].get<int>()] = e["args"]["name"];
    }
    REQUIRE(!process.empty());
    CHECK(process.begin()->second.rfind("llm: stage000", 0) == 0);
    CHECK(process.rbegin()->second.rfind("cnn: node", 0) == 0);
    CHECK(process.size() == 2 + 2);  // two pipeline stages, the CNN job's two nodes
    std::size_t apart = 0;
    for (const char* job : {"llm", "cnn"})
      apart +=
          nlohmann::json::parse(slurp(dir / "mix" / "jobs" / job / "trace.json"))["traceEvents"]
              .size();
    CHECK(events == apart);
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("jobs: an LLM job's size and the file's data-parallel defaults are errors at the key") {
    const std::string head = "platform: dgx-h100-superpod\ncluster: {nodes: 8}\n";
    const std::string llm =
        "  - {name: llm, model: llama3_8b, nodes: 3, parallel: {tp: 8, pp: 2, dp: 2, "
        "micro_batch: 1, global_batch: 16, seq_len: 4096}}\n";
    CHECK(error_of(head + "jobs:\n" + llm) ==
          "in.yaml:4:74: error: jobs[0].parallel.dp: tp 8 x pp 2 x cp 1 x dp 2 = 32 GPUs, but "
          "the job has 24");
    // A default of every job that an LLM job does not read: said at the key, with the way out.
    const std::string err = error_of(head + "batch_per_gpu: 64\njobs:\n" + llm, {"jobs.0.nodes=4"});
    INFO(err);
    CHECK(err.rfind("in.yaml:3:16: error: batch_per_gpu: not used with `parallel:`", 0) == 0);
    CHECK(err.find("job 'llm' is an LLM job: set this key in its other jobs instead") !=
          std::string::npos);
  }
}
