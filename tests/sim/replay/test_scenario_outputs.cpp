// Scenario loading (errors with file:line, --set overrides) and output files: summary.json,
// iterations.csv, ops.csv, trace.json; determinism across two processes.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/config_error.hpp"
#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "sim/outputs.hpp"
#include "sim/scenario.hpp"
#include "sim/step_program.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_files.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using scalecast::common::ConfigError;

using scalecast::sim::testing::kTool;
using scalecast::sim::testing::slurp;

namespace {

const char* kScenario = R"(name: t
platform: summit
model: resnet50
precision: fp16
batch_per_gpu: 256
nodes: [1, 2, 4]
allreduce:
  algorithm: hierarchical
  fusion_buffer: 64MiB
  cycle_time: 5ms
fidelity: wave
)";

// The loader's error for a scenario text with --set overrides, or "no error".
std::string message(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    load_scenario_text(text, "bad.yaml", parse_overrides(sets));
  } catch (const ConfigError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("scenario loads with defaults and --set overrides") {
    const Scenario s = load_scenario_text(kScenario, "t.yaml");
    CHECK(s.nodes == std::vector<int>{1, 2, 4});
    CHECK(s.batch_per_gpu == 256);
    CHECK(s.allreduce.fusion_bytes == 64.0 * 1024 * 1024);
    CHECK(s.allreduce.cycle_time_s == doctest::Approx(5e-3).scale(0.0));
    const Scenario o = load_scenario_text(
        kScenario, "t.yaml",
        parse_overrides({"nodes=4608", "allreduce.algorithm=ring", "input.sample_size=150528B"}));
    CHECK(o.nodes == std::vector<int>{4608});
    CHECK(o.allreduce.algorithm == Algorithm::kRing);
    CHECK(o.input_sample_bytes == 150528.0);
    CHECK(o.resolved_yaml.find("4608") != std::string::npos);
    const Scenario v = load_scenario_text(
        kScenario, "t.yaml",
        parse_overrides({"variability.compute_noise=3%", "variability.stragglers=0.01",
                         "variability.straggler_slowdown=1.5"}));
    CHECK(v.compute_noise_cv == doctest::Approx(0.03).scale(0.0));
    CHECK(v.straggler_fraction == doctest::Approx(0.01).scale(0.0));
    CHECK(v.straggler_slowdown == doctest::Approx(1.5));
  }

  TEST_CASE("scenario errors name the file line and key") {
    const std::string unknown = message(std::string(kScenario) + "fidelty: flow\n");
    INFO(unknown);
    CHECK(unknown.find("bad.yaml:12") != std::string::npos);
    CHECK(unknown.find("fidelity") != std::string::npos);  // the suggestion
    const std::string bad_algo = message(kScenario, {"allreduce.algorithm=butterfly"});
    INFO(bad_algo);
    CHECK(bad_algo.find("allreduce.algorithm") != std::string::npos);
    CHECK(bad_algo.find("auto, ring, tree, hierarchical, nvls, nvls_tree, collnet_direct") !=
          std::string::npos);
    // An NCCL algorithm the machine lacks (NVLS needs Hopper on NVSwitch; Summit is Volta).
    const std::string no_nvls = message(kScenario, {"allreduce.algorithm=nvls"});
    INFO(no_nvls);
    CHECK(no_nvls.find("allreduce.algorithm: at 1 node of summit: all-reduce algorithm nvls") !=
          std::string::npos);
    CHECK(no_nvls.find("NVLS no") != std::string::npos);
    CHECK(message(kScenario, {"allreduce.protocol=simple"}) == "no error");
    // CollNet on a fabric without SHARP would silently change nothing: refused at the key.
    const std::string no_sharp = message(kScenario, {"allreduce.collnet=true"});
    INFO(no_sharp);
    CHECK(no_sharp.find("allreduce.collnet: expected false: CollNet needs in-network reduction "
                        "(SHARP), and the network of summit does not declare it") !=
          std::string::npos);
    CHECK(message(kScenario, {"allreduce.collnet=false"}) == "no error");
    CHECK(message(kScenario,
                  {"platform=dgx-h100-superpod", "allreduce.library=mpi", "allreduce.collnet=true"})
              .find("allreduce.collnet: expected false: CollNet is NCCL's") != std::string::npos);
    CHECK(message(kScenario,
                  {"platform=dgx-h100-superpod", "allreduce.tuner=none", "allreduce.collnet=true"})
              .find("allreduce.tuner is none") != std::string::npos);
    CHECK(message(kScenario, {"allreduce.collnet=maybe"}).find("allreduce.collnet") !=
          std::string::npos);
    CHECK(message(kScenario, {"platform=dgx-h100-superpod", "allreduce.algorithm=auto",
                              "allreduce.cycle_time=0s", "allreduce.collnet=true"}) == "no error");
    const std::string bad_size = message(kScenario, {"allreduce.fusion_buffer=64"});
    CHECK(bad_size.find("allreduce.fusion_buffer") != std::string::npos);
    const std::string bad_nodes = message(kScenario, {"nodes=[1, -2]"});
    CHECK(bad_nodes.find("nodes[1]") != std::string::npos);
    CHECK(message(kScenario, {"typo_key=1"}).find("typo_key") != std::string::npos);
  }

  TEST_CASE("allreduce keys the library and algorithm never read are errors at the key") {
    // Each was accepted and changed nothing (library mpi with an NCCL-only algorithm stopped the
    // point with an internal error instead, exit 4).
    const std::pair<std::vector<std::string>, const char*> refused[] = {
        {{"allreduce.library=mpi", "allreduce.algorithm=nvls"},
         "allreduce.algorithm: not used with library mpi"},
        {{"allreduce.library=mpi", "allreduce.protocol=ll"},
         "allreduce.protocol: not used with library mpi"},
        {{"platform=uber-pascal-roce25", "allreduce.library=mpi_cpu", "allreduce.algorithm=tree"},
         "allreduce.algorithm: not used with library mpi_cpu"},
        {{"platform=uber-pascal-roce25", "allreduce.library=mpi_cpu", "allreduce.algorithm=ring",
          "allreduce.chunks=2"},
         "allreduce.chunks: not used with library mpi_cpu"},
        {{"allreduce.algorithm=ring", "allreduce.inter_node=tree"},
         "allreduce.inter_node: not used with algorithm ring"},
        {{"allreduce.algorithm=auto", "allreduce.inter_node=tree"},
         "allreduce.inter_node: not used with algorithm auto: NCCL's tuning model chooses"},
        {{"allreduce.algorithm=ring", "allreduce.chunks=3"},
         "allreduce.chunks: not used with algorithm ring"},
        {{"allreduce.chunks=3"},  // hierarchical with the default ring across nodes
         "allreduce.chunks: not used with algorithm hierarchical and inter_node ring"},
        {{"platform=uber-pascal-roce25", "strategy=parameter_server", "parameter_server.tasks=1"},
         "bad.yaml:8:14: error: allreduce.algorithm: not used with strategy parameter_server"}};
    for (const auto& [overrides, expected] : refused) {
      const std::string e = message(kScenario, overrides);
      INFO(e);
      CHECK(e.find(expected) != std::string::npos);
      // The override that wrote the key, or the file's line (the file's algorithm key).
      CHECK((e.find("--set ") == 0 || e.find("bad.yaml:8:") == 0));
    }
    // Where the key is read, it is accepted; a key stating its default asks for nothing.
    for (const std::vector<std::string>& ok :
         {std::vector<std::string>{"allreduce.inter_node=tree", "allreduce.chunks=3"},
          {"allreduce.algorithm=tree", "allreduce.chunks=3"},
          {"allreduce.algorithm=auto", "allreduce.chunks=3"},
          {"allreduce.algorithm=auto", "allreduce.tuner=none", "allreduce.inter_node=tree"},
          {"allreduce.algorithm=ring", "allreduce.chunks=auto", "allreduce.inter_node=ring"},
          {"allreduce.library=mpi", "allreduce.tuner=nccl"},
          {"allreduce.library=mpi", "allreduce.algorithm=tree"},
          {"platform=uber-pascal-roce25", "allreduce.library=mpi_cpu", "allreduce.algorithm=ring"},
          {"platform=uber-pascal-roce25", "strategy=parameter_server", "parameter_server.tasks=1",
           "allreduce={transport: tcp}"}})
      CHECK(message(kScenario, ok) == "no error");
  }

  TEST_CASE("outputs are written and deterministic across processes") {
    const char* target = std::getenv("SCALECAST_DETERMINISM_OUT");
    if (target == nullptr) {
      // The checking process: run this test case twice in child processes and compare bytes.
      const auto base =
          std::filesystem::temp_directory_path() / ("scalecast-det-" + std::to_string(::getpid()));
      const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
      for (const char* run : {"a", "b"}) {
        const std::string cmd = "SCALECAST_DETERMINISM_OUT=" + (base / run).string() + " " + exe +
                                " -tc='outputs are written and deterministic*' > /dev/null";
        REQUIRE(std::system(cmd.c_str()) == 0);
      }
      for (const char* f : {"summary.json", "trace.json", "ops.csv", "iterations.csv"}) {
        const std::string a = slurp(base / "a" / f), b = slurp(base / "b" / f);
        INFO(f << ": " << a.size() << " and " << b.size() << " bytes");
        CHECK(!a.empty());
        CHECK(a == b);
      }
      const auto summary = nlohmann::json::parse(slurp(base / "a" / "summary.json"));
      for (const char* k : {"nodes", "gpus", "iteration_time_s", "throughput_samples_per_s",
                            "scaling_efficiency", "breakdown"})
        CHECK(summary.contains(k));
      for (const char* k : {"compute_s", "exposed_comm_s", "io_stall_s", "copy_s", "idle_s"})
        CHECK(summary["breakdown"].contains(k));
      const auto trace = nlohmann::json::parse(slurp(base / "a" / "trace.json"));
      CHECK(trace["traceEvents"].size() > 10);
      std::filesystem::remove_all(base);
      return;
    }
    auto engine = create_engine({NetworkMode::kIdeal});
    testing::TestPlatformSpec ps;
    ps.nodes = 4;
    ps.gpus = 2;
    testing::TestPlatform platform(ps);
    JobSpec spec;
    spec.nodes = {0, 1, 2, 3};
    spec.gpus_per_node = 2;
    spec.program = testing::synthetic_program(8, 1e-3, 16, 2e-3, 3e6, 1e-3);
    spec.program.input_bytes = 8e6;
    spec.allreduce.fusion_bytes = 10e6;
    spec.allreduce.cycle_time_s = 5e-3;
    spec.fidelity = Fidelity::kFlow;
    spec.warmup = 1;
    spec.iterations = 2;
    spec.trace_nodes = {0, 3};
    Job job(platform, spec);
    engine->run();
    const JobResult r = job.result();
    Scenario s = load_scenario_text(kScenario, "t.yaml");
    auto point = point_json(s, r);
    add_efficiency(point, r.throughput_samples_per_s / r.gpus * 1.1, 0.0);
    write_point_files(target, r);
    write_summary(target, s, {point});
  }
}

namespace {
// One iteration of `program` on one GPU (no warm-up): the job's result. 4 forward ops of 1 ms,
// 6 backward of 2 ms and an optimizer of 3 ms, tier by op index, optionally accumulated.
JobResult one_gpu_step(const std::function<std::string(std::size_t)>& tier_of, int accumulation) {
  auto engine = create_engine({NetworkMode::kIdeal});
  testing::TestPlatformSpec ps;
  ps.nodes = 1;
  ps.gpus = 1;
  testing::TestPlatform platform(ps);
  JobSpec spec;
  spec.nodes = {0};
  spec.gpus_per_node = 1;
  spec.program = testing::synthetic_program(4, 1e-3, 6, 2e-3, 1e6, 3e-3);
  for (std::size_t i = 0; i < spec.program.ops.size(); ++i) spec.program.ops[i].tier = tier_of(i);
  spec.program = accumulate_micro_batches(spec.program, accumulation);
  spec.warmup = 0;
  spec.iterations = 1;
  Job job(platform, spec);
  engine->run();
  return job.result();
}
}  // namespace

TEST_SUITE("unit") {
  // summary.json's op_costs and the table's last line say how much of the step's op time was
  // priced from measured kernels: per tier the ops of one iteration and their summed time.
  TEST_CASE("op_costs reports each tier's ops and time and the measured share") {
    const JobResult r = one_gpu_step(
        [](std::size_t i) { return i < 4    ? "exact"
                                   : i < 10 ? "datasheet"
                                            : "fitted"; }, 1);
    REQUIRE(r.op_tiers.size() == 3);
    CHECK(r.op_tiers.at("exact").ops == 4);
    CHECK(r.op_tiers.at("exact").seconds == doctest::Approx(4e-3));
    CHECK(r.op_tiers.at("datasheet").ops == 6);
    CHECK(r.op_tiers.at("datasheet").seconds == doctest::Approx(12e-3));
    CHECK(r.op_tiers.at("fitted").ops == 1);
    Scenario s = load_scenario_text(kScenario, "t.yaml");
    const auto point = point_json(s, r);
    REQUIRE(point.contains("op_costs"));
    // (4 + 3) ms of 19 ms from measurements.
    CHECK(point["op_costs"]["measured_time_share"].get<double>() == doctest::Approx(7.0 / 19.0));
    CHECK(point["op_costs"]["tiers"]["datasheet"]["ops"].get<int>() == 6);
    CHECK(format_table(s, {point})
              .find("op costs: 36.8% of the step's op time priced from "
                    "measured kernels (datasheet 6 ops, exact 4 ops, "
                    "fitted 1 ops)") != std::string::npos);
  }

  // summary.json names the transport when the exchange ran over TCP, and only then.
  TEST_CASE("summary.json says transport tcp when the job ran over TCP") {
    const JobResult r = one_gpu_step([](std::size_t) { return "exact"; }, 1);
    Scenario s = load_scenario_text(kScenario, "t.yaml");
    CHECK_FALSE(point_json(s, r).contains("transport"));
    s.allreduce.transport = Transport::kTcp;
    CHECK(point_json(s, r)["transport"] == "tcp");
  }

  // A parameter-server run says what it assumed, gRPC's receive rates included; others do not.
  TEST_CASE("summary.json describes the parameter servers of a parameter-server run") {
    const JobResult r = one_gpu_step([](std::size_t) { return "exact"; }, 1);
    Scenario s = load_scenario_text(kScenario, "t.yaml");
    CHECK_FALSE(point_json(s, r).contains("parameter_server"));
    s.strategy = "parameter_server";
    s.parameter_server.tasks = 4;
    s.parameter_server.placement = PsPlacement::kCpu;
    s.parameter_server.sharding = PsSharding::kGreedy;
    s.parameter_server.receive_large_Bps = 0.0;
    const auto ps = point_json(s, r)["parameter_server"];
    CHECK(ps["tasks"] == 4);
    CHECK(ps["placement"] == "cpu");
    CHECK(ps["mode"] == "sync");
    CHECK(ps["variables"] == "cpu");
    CHECK(ps["sharding"] == "greedy");
    CHECK(ps["receive_rate_Bps"].get<double>() == kTfGrpcReceiveBps);
    CHECK(ps["receive_rate_large_Bps"].get<double>() == 0.0);
  }

  // With gradient accumulation the op standing for micro-batches 1..K-1 repeats the step's ops:
  // it is no tier of its own, so the shares stay those of one micro-batch.
  TEST_CASE("op_costs with gradient accumulation counts one micro-batch's ops") {
    const JobResult r =
        one_gpu_step([](std::size_t i) { return i < 4 ? "exact" : "datasheet"; }, 4);
    REQUIRE(r.op_tiers.size() == 2);
    CHECK(r.op_tiers.count("accumulation") == 0);
    CHECK(r.op_tiers.at("exact").ops == 4);
    CHECK(r.op_tiers.at("datasheet").ops == 7);
    CHECK(r.op_tiers.at("datasheet").seconds == doctest::Approx(15e-3));
  }

  TEST_CASE("ops.csv quotes names holding commas or quotes (RFC 4180)") {
    JobResult r;
    r.nodes = 1;
    r.gpus_per_node = 1;
    r.gpus = 1;
    r.iterations.push_back({});
    r.iterations.back().end_s = 1.0;
    Interval iv;
    iv.name = "block1,conv \"3x3\"";
    iv.tier = "exact";
    iv.end_s = 0.5;
    r.intervals.push_back(iv);
    const auto dir = std::filesystem::temp_directory_path() / "scalecast_ops_csv_quoting";
    std::filesystem::remove_all(dir);
    write_point_files(dir.string(), r);
    const std::string ops = slurp((dir / "ops.csv").string());
    CHECK(ops ==
          "node,gpu,iteration,op,stream,start_s,end_s,duration_s,tier,bytes\n"
          "0,0,0,\"block1,conv \"\"3x3\"\"\",compute,0,0.5,0.5,exact,0\n");
    std::filesystem::remove_all(dir);
  }
}
