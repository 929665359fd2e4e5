// `scalecast run` end to end on the default scenario (real Summit platform, ResNet-50, calibrated
// cost model): two runs give byte-identical summary.json and trace.json; a bad --set value is a
// ConfigError naming the scenario file, exit code 1.

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "tests/sim/replay/test_files.hpp"

using scalecast::sim::testing::kTool;
using scalecast::sim::testing::slurp;

namespace {}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("run: two runs of the default scenario give byte-identical summary and trace") {
    const auto base =
        std::filesystem::temp_directory_path() / ("scalecast-run-" + std::to_string(::getpid()));
    for (const char* run : {"a", "b"}) {
      const std::string cmd = kTool +
                              " --quiet run scenarios/summit-resnet50.yaml --set nodes=[1,2] "
                              "--set iterations=1 -j 2 --out " +
                              (base / run).string() + " > " + (base.string() + run) + ".txt";
      REQUIRE(std::system(cmd.c_str()) == 0);
    }
    for (const char* f : {"summary.json", "nodes-2/trace.json", "nodes-2/ops.csv",
                          "nodes-1/iterations.csv", "scenario.resolved.yaml"}) {
      const std::string a = slurp(base / "a" / f), b = slurp(base / "b" / f);
      INFO(f << ": " << a.size() << " bytes");
      CHECK(!a.empty());
      CHECK(a == b);
    }
    const auto summary = nlohmann::json::parse(slurp(base / "a" / "summary.json"));
    REQUIRE(summary["points"].size() == 2);
    const auto& p2 = summary["points"][1];
    CHECK(p2["nodes"] == 2);
    CHECK(p2["gpus"] == 12);
    CHECK(p2["scaling_efficiency"]["vs_1_node"].get<double>() > 0.5);
    CHECK(p2["scaling_efficiency"]["vs_1_node"].get<double>() <= 1.0 + 1e-9);
    const std::string table = slurp(base.string() + "a.txt");
    INFO(table);
    CHECK(table.find("samples/s") != std::string::npos);
    std::filesystem::remove_all(base);
    std::filesystem::remove(base.string() + "a.txt");
    std::filesystem::remove(base.string() + "b.txt");
  }

  TEST_CASE("run: a bad --set value is an error naming the override and key") {
    const auto err = std::filesystem::temp_directory_path() /
                     ("scalecast-run-err-" + std::to_string(::getpid()));
    const std::string cmd =
        kTool +
        " run scenarios/summit-resnet50.yaml --set allreduce.algorithm=butterfly"
        " > /dev/null 2> " +
        err.string();
    const int status = std::system(cmd.c_str());
    CHECK(WEXITSTATUS(status) == 1);
    const std::string message = slurp(err);
    INFO(message);
    CHECK(message.rfind("--set allreduce.algorithm=butterfly: error: allreduce.algorithm: ", 0) ==
          0);
    std::filesystem::remove(err);
  }
}

TEST_SUITE("slow") {
  TEST_CASE("run: the whole of Summit in one iteration") {
    // All 4,608 nodes, including the 54 high-memory nodes (V100 32 GB, same speed).
    const auto out =
        std::filesystem::temp_directory_path() / ("scalecast-full-" + std::to_string(::getpid()));
    const std::string cmd = kTool +
                            " --quiet run scenarios/summit-resnet50.yaml --set nodes=4608 "
                            "--set iterations=1 --set warmup=0 -j 2 --out " +
                            out.string() + " > /dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
    CHECK(summary["gpus"] == 27648);
    MESSAGE("full Summit: " << summary["iteration_time_s"].get<double>() << " s per iteration, "
                            << summary["throughput_samples_per_s"].get<double>() << " samples/s");
    CHECK(summary["scaling_efficiency"]["vs_1_node"].get<double>() > 0.3);
    std::filesystem::remove_all(out);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("run: a job spread over V100 and A100 partitions prices each GPU type on its own") {
    // scenarios/hetero-v100-a100-resnet50.yaml at 2 nodes, spread: node 0 is a DGX-1V, node 1 a
    // DGX A100. The A100 node's compute ops (traced: first and last node) take less time than
    // the V100 node's, and the step is no faster than the V100 node alone (synchronous
    // training waits for the slowest GPU).
    const auto base =
        std::filesystem::temp_directory_path() / ("scalecast-hetero-" + std::to_string(::getpid()));
    const std::string cmd = kTool +
                            " --quiet run scenarios/hetero-v100-a100-resnet50.yaml --set "
                            "nodes=[1,2] --set iterations=1 --out " +
                            base.string() + " > " + base.string() + ".txt";
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::map<int, double> compute_s;  // per node, iteration 1, summed over its GPUs
    std::istringstream ops(slurp(base / "nodes-2" / "ops.csv"));
    std::string line;
    std::getline(ops, line);  // header
    while (std::getline(ops, line)) {
      std::vector<std::string> f;
      std::stringstream ls(line);
      for (std::string cell; std::getline(ls, cell, ',');) f.push_back(cell);
      REQUIRE(f.size() == 10);
      if (f[2] == "1" && f[4] == "compute") compute_s[std::stoi(f[0])] += std::stod(f[7]);
    }
    const auto summary = nlohmann::json::parse(slurp(base / "summary.json"));
    const double one_node_s = summary["points"][0]["iteration_time_s"].get<double>();
    const double two_nodes_s = summary["points"][1]["iteration_time_s"].get<double>();
    MESSAGE("compute per GPU: V100 node "
            << compute_s[0] / 8 * 1e3 << " ms, A100 node " << compute_s[1] / 8 * 1e3
            << " ms; iteration 1 node " << one_node_s * 1e3 << " ms, 2 nodes " << two_nodes_s * 1e3
            << " ms");
    REQUIRE(compute_s.size() == 2);
    CHECK(compute_s[1] < 0.8 * compute_s[0]);
    CHECK(two_nodes_s >= one_node_s);
    std::filesystem::remove_all(base);
    std::filesystem::remove(base.string() + ".txt");
  }

  TEST_CASE("run: measured all-reduces of the scenario's database are used and reported") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("scalecast-run-coll-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    // Synthetic NCCL ring all-reduces on 8 V100 of one node: 50 us + S / 10 GB/s (far below the
    // NVLink datasheet terms).
    std::string db =
        "format: scalecast-calibration\nversion: 1\nsources:\n"
        "  - {id: s, device: v100-sxm2, backend: cuda, date: \"2026-01-01\"}\nentries:\n";
    for (long long b : {1000000LL, 10000000LL, 100000000LL})
      db +=
          "  - {source: s, device: v100-sxm2, op: collective, pass: all_reduce, dtype: fp32, "
          "select: fixed, dims: {bytes: " +
          std::to_string(b) + ", ranks: 8}, median_s: " + std::to_string(50e-6 + b / 10e9) +
          ", algo: ring}\n";
    std::ofstream(dir / "db.yaml") << db;
    const std::string scenario =
        "platform: dgx1-v100\nmodel: resnet50\nprecision: fp16\nbatch_per_gpu: 32\nnodes: [1]\n"
        "iterations: 1\nallreduce:\n  algorithm: ring\n  tuner: nccl\nfidelity: wave\n";
    std::ofstream(dir / "datasheet.yaml") << scenario;
    std::ofstream(dir / "measured.yaml") << scenario << "calibration: [db.yaml]\n";
    std::map<std::string, nlohmann::json> point;
    for (const char* run : {"datasheet", "measured"}) {
      const std::string cmd = kTool + " --quiet run " + (dir / run).string() + ".yaml --out " +
                              (dir / run).string() + " > /dev/null";
      REQUIRE(std::system(cmd.c_str()) == 0);
      // One node count: summary.json is the point itself.
      point[run] = nlohmann::json::parse(slurp(dir / run / "summary.json"));
    }
    const auto& d = point["datasheet"];
    const auto& m = point["measured"];
    INFO("datasheet " << d.dump() << "\nmeasured " << m.dump());
    CHECK(d["collectives"]["tier"] == "datasheet");
    CHECK(m["collectives"]["tier"] == "measured");
    CHECK(m["comm_total_s"].get<double>() > 2.0 * d["comm_total_s"].get<double>());
    std::filesystem::remove_all(dir);
  }
}
