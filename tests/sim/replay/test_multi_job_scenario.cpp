// Scenarios with `jobs:` (sim/multi_job_scenario.hpp): placement by policy or node lists, each
// job's own keys over the file's, and bad inputs (overlapping node lists, more nodes than the
// machine, a negative start) as file:line errors at the job's key; `scalecast run` end to end.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
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

const std::string kHead = R"(name: mix
platform: dgx-a100-superpod
cluster: {nodes: 8}
model: resnet50
batch_per_gpu: 64
)";

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    load_scenario_text(text, "in.yaml", parse_overrides(sets));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::vector<std::vector<int>> lists(const Scenario& s) {
  std::vector<std::vector<int>> out;
  for (const MixJob& j : s.multi->jobs) out.push_back(j.node_list);
  return out;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("jobs: --set reaches one job by its index, and an error names the override") {
    const std::string text = kHead + R"(jobs:
  - {name: a, nodes: 2}
  - {name: b, nodes: 2, start: 1ms}
)";
    const Scenario s = load_scenario_text(text, "in.yaml", parse_overrides({"jobs.1.start=5ms"}));
    REQUIRE(s.multi);
    CHECK(s.multi->jobs.at(1).start_s == doctest::Approx(5e-3));
    CHECK(s.multi->jobs.at(0).start_s == 0.0);
    // Before, `jobs` became a map and the error was "in.yaml:6:1: error: jobs: expected a list".
    CHECK(error_of(text, {"jobs.0.start=-1ms"}) ==
          "--set jobs.0.start=-1ms: error: jobs[0].start: expected a non-negative time, got "
          "\"-1ms\"");
    CHECK(error_of(text, {"jobs.2.nodes=1"}) ==
          "--set jobs.2.nodes=1: error: jobs: is a list of 2 items: expected an index from 0 to "
          "1, got \"2\"");
  }

  TEST_CASE("jobs: one job's size does not leak into the file's defaults for the next jobs") {
    // Each job's scenario is the file's keys with the job's over them; a job of `gpus: 2` sets
    // its own gpus_per_node. Before, that write went through to the file's `gpus_per_node: 4`
    // (the merged YAML shared its nodes), so job b ran 2 GPUs per node instead of 4.
    const Scenario s = load_scenario_text(kHead + R"(gpus_per_node: 4
jobs:
  - {name: a, gpus: 2}
  - {name: b, nodes: 1}
)",
                                          "in.yaml");
    REQUIRE(s.multi);
    CHECK(s.multi->jobs.at(0).scenario.gpus_per_node == 2);
    CHECK(s.multi->jobs.at(1).scenario.gpus_per_node == 4);
  }

  TEST_CASE("jobs: packed, spread and random placement give disjoint node lists") {
    const std::string jobs = R"(jobs:
  - {name: a, nodes: 3}
  - {name: b, nodes: 2, model: bert_large, batch_per_gpu: 8}
  - {name: c, gpus: 16}
)";
    const Scenario packed = load_scenario_text(kHead + jobs, "in.yaml");
    REQUIRE(packed.multi);
    CHECK(packed.multi->machine_nodes == 8);
    CHECK(lists(packed) == std::vector<std::vector<int>>{{0, 1, 2}, {3, 4}, {5, 6}});
    // Each job's own keys over the file's.
    CHECK(packed.multi->jobs[1].scenario.model == "bert_large");
    CHECK(packed.multi->jobs[1].scenario.batch_per_gpu == 8);
    CHECK(packed.multi->jobs[0].scenario.batch_per_gpu == 64);
    CHECK(packed.multi->jobs[2].nodes == 2);  // 16 GPUs = two 8-GPU nodes
    const Scenario spread = load_scenario_text(kHead + "placement: spread\n" + jobs, "in.yaml");
    CHECK(lists(spread) == std::vector<std::vector<int>>{{0, 2, 5}, {1, 4}, {3, 6}});
    const Scenario random = load_scenario_text(kHead + "placement: random\n" + jobs, "in.yaml");
    const Scenario again = load_scenario_text(kHead + "placement: random\n" + jobs, "in.yaml");
    CHECK(lists(random) == lists(again));  // the seed decides
    std::vector<int> all;
    for (const auto& l : lists(random)) all.insert(all.end(), l.begin(), l.end());
    std::sort(all.begin(), all.end());
    CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
    CHECK(all.size() == 7);
    const Scenario other_seed =
        load_scenario_text(kHead + "placement: random\nseed: 99\n" + jobs, "in.yaml");
    CHECK(lists(other_seed) != lists(random));
  }

  TEST_CASE("jobs: explicit node lists come first, the policy places the rest") {
    // Summit (it has a parallel file system to read), at its size.
    const Scenario s = load_scenario_text(R"(platform: summit
model: resnet50
batch_per_gpu: 64
jobs:
  - {name: a, nodes: 2}
  - {name: b, node_list: [0, 5]}
  - {name: io, kind: io, nodes: 1, read_rate: 10GBps, start: 1s}
)",
                                          "in.yaml");
    CHECK(lists(s) == std::vector<std::vector<int>>{{1, 2}, {0, 5}, {3}});
    CHECK(s.multi->jobs[2].kind == MixJob::Kind::kIo);
    CHECK(s.multi->jobs[2].read_rate_Bps == doctest::Approx(10e9));
    CHECK(s.multi->jobs[2].start_s == doctest::Approx(1.0));
    CHECK(s.multi->training() == std::vector<int>{0, 1});
  }

  TEST_CASE("jobs: overlapping node lists are an error at the second list's entry") {
    const std::string e = error_of(kHead + R"(jobs:
  - {name: a, node_list: [0, 1]}
  - {name: b, node_list: [2, 1]}
)");
    CHECK(e == "in.yaml:8:30: error: jobs[1].node_list[1]: node 1 is already used by job 'a'");
  }

  TEST_CASE("jobs: more nodes than the machine is an error at the job that does not fit") {
    const std::string e = error_of(kHead + R"(jobs:
  - {name: a, nodes: 6}
  - {name: b, nodes: 3}
)");
    CHECK(e ==
          "in.yaml:8:22: error: jobs[1].nodes: expected at most 2 nodes: dgx-a100-superpod has 8 "
          "nodes and "
          "the jobs before this one take 6 (cluster.nodes sets the machine's size)");
    const std::string beyond = error_of(kHead + "jobs:\n  - {name: a, node_list: [8]}\n");
    INFO(beyond);
    CHECK(beyond ==
          "in.yaml:7:27: error: jobs[0].node_list[0]: expected at most 7 (a whole number from 0 "
          "to 7), got 8");
  }

  TEST_CASE("jobs: a negative start is an error at the job's start") {
    const std::string e = error_of(kHead + "jobs:\n  - {name: a, nodes: 1, start: -5ms}\n");
    INFO(e);
    CHECK(e == "in.yaml:7:32: error: jobs[0].start: expected a non-negative time, got \"-5ms\"");
  }

  TEST_CASE("jobs: an I/O job of more requests than scalecast simulates is an error at its key") {
    // 100 GB/s in 1 MiB requests is 95,367 a second: 1 s is above the 50,000 requests an I/O
    // job may read; without a duration it reads at least until the last training job starts.
    const std::string io =
        "  - {name: io, kind: io, nodes: 1, read_rate: 100GBps, "
        "request_size: 1MiB";
    const std::string head =
        "name: mix\nplatform: summit\ncluster: {nodes: 64}\nmodel: resnet50\nbatch_per_gpu: 64\n";
    const std::string timed =
        error_of(head + "jobs:\n  - {name: a, nodes: 1}\n" + io + ", duration: 1s}\n");
    INFO(timed);
    CHECK(timed.rfind("in.yaml:8:86: error: jobs[1].duration: expected at most 50,000 requests "
                      "(9.54e+04 of 1 MiB at 100 GB/s), the most scalecast simulates per I/O "
                      "job; its duration is 1 s (give a larger request_size, a lower read_rate "
                      "or a shorter duration)",
                      0) == 0);
    const std::string late =
        error_of(head + "jobs:\n  - {name: a, nodes: 1, start: 10s}\n" + io + "}\n");
    INFO(late);
    CHECK(late.rfind("in.yaml:8:5: error: jobs[1]: expected at most 50,000 requests (9.54e+05 of "
                     "1 MiB at 100 GB/s)",
                     0) == 0);
    CHECK(late.find("it reads until the training jobs end, at least 10 s after its start") !=
          std::string::npos);
    CHECK(error_of(head + "jobs:\n  - {name: a, nodes: 1}\n" + io + ", duration: 0.5s}\n") ==
          "no error");
  }

  TEST_CASE("jobs: a mix whose nodes reach beyond what scalecast builds is an error at placement") {
    // The mix builds the machine up to its last node: spread over 1,000,000 nodes ran out of
    // 24 GB.
    const std::string head =
        "name: mix\nplatform: summit\ncluster: {nodes: 1000000}\nmodel: resnet50\n"
        "batch_per_gpu: 64\nplacement: spread\n";
    CHECK(error_of(head + "jobs:\n  - {name: a, nodes: 2}\n  - {name: b, nodes: 2}\n") ==
          "in.yaml:6:12: error: placement: the jobs' nodes reach node 500,001 of the machine, "
          "which is built up to there: more than the 200,000 nodes scalecast builds for one "
          "simulation (use placement: packed, node lists nearer the start, or a smaller "
          "cluster.nodes)");
  }

  TEST_CASE("jobs: a job's bad key is an error at that job's key path") {
    const std::string batch =
        error_of(kHead + "jobs:\n  - {name: a, nodes: 1, batch_per_gpu: 0}\n");
    INFO(batch);
    CHECK(batch ==
          "in.yaml:7:40: error: jobs[0].batch_per_gpu: expected at least 1 (a whole number from 1 "
          "to 1,000,000), got 0");
    CHECK(error_of(kHead + "nodes: 2\njobs:\n  - {nodes: 1}\n")
              .rfind("in.yaml:6:8: error: nodes: expected no top-level nodes with jobs", 0) == 0);
    CHECK(error_of(kHead + "jobs:\n  - {name: a, nodes: 1, placement: packed}\n").find("jobs[0]") !=
          std::string::npos);
    CHECK(error_of(kHead + "jobs:\n  - {name: a, nodes: 1}\n  - {name: a, nodes: 1}\n")
              .find("jobs[1].name: expected a name no other job has") != std::string::npos);
    CHECK(error_of(kHead + "jobs:\n  - {name: r, kind: io, nodes: 1, read_rate: 1GBps}\n")
              .find("expected at least one training job") != std::string::npos);
    // An I/O job reads at least a byte per second and per request: a 4.9e-324 B/s rate made the
    // pace infinite and the reader read unpaced ("read 0.04 of 0.00 GB/s asked").
    const std::string mix = "jobs:\n  - {name: a, nodes: 1}\n  - {name: r, kind: io, nodes: 1, ";
    const std::string summit = "name: mix\nplatform: summit\nmodel: resnet50\n";
    CHECK(error_of(summit + mix + "read_rate: 4.9e-324Bps}\n")
              .find("jobs[1].read_rate: expected a bandwidth of at least 1 B/s") !=
          std::string::npos);
    CHECK(error_of(summit + mix + "read_rate: 1GBps, request_size: 4.9e-324B}\n")
              .find("jobs[1].request_size: expected a size of at least 1 B") != std::string::npos);
    CHECK(error_of(summit + mix + "read_rate: 1Bps, request_size: 1B}\n") == "no error");
    // A window shorter than one request per node read more than it asked (a 1 ms job at
    // 10 GB/s reported 11.5 GB/s): each node must read at least one whole request.
    CHECK(error_of(summit + mix + "read_rate: 10GBps, request_size: 16MiB, duration: 1ms}\n")
              .find("jobs[1].duration: expected a duration in which every node (1 in all) reads at "
                    "least one request of 16 MiB at 10 GB/s per node (at least 1.678 ms), got "
                    "\"1ms\"") != std::string::npos);
    CHECK(error_of(summit + mix + "read_rate: 10GBps, request_size: 16MiB, duration: 2ms}\n") ==
          "no error");
    CHECK(error_of(kHead + "jobs:\n  - {name: a, gpus: 12}\n")
              .find("jobs[0].gpus: expected at most 8 or a multiple of 8") != std::string::npos);
  }

  TEST_CASE("jobs: gpus sizes the job in full, and a gpus_per_node that disagrees is an error") {
    // gpus: 16 on 8-GPU nodes ran at the file's gpus_per_node: 4 (2 nodes x 4 = 8 GPUs, while
    // the resolved scenario said 16).
    const Scenario s =
        load_scenario_text(kHead + "gpus_per_node: 4\njobs:\n  - {name: a, gpus: 16}\n", "in.yaml");
    REQUIRE(s.multi);
    CHECK(s.multi->jobs[0].nodes == 2);
    CHECK(s.multi->jobs[0].scenario.gpus_per_node == 8);
    CHECK(error_of(kHead + "jobs:\n  - {name: b, gpus: 16, gpus_per_node: 4}\n") ==
          "in.yaml:7:40: error: jobs[0].gpus_per_node: expected 8 or no gpus_per_node: gpus: 16 "
          "runs on 2 whole nodes of 8 GPUs, got 4; for 4 nodes of 4 GPUs give nodes: 4 and "
          "gpus_per_node: 4");
    // gpus: 3 with gpus_per_node: 2 ran 3 GPUs and ignored the 2.
    CHECK(error_of(kHead + "jobs:\n  - {name: c, gpus: 3, gpus_per_node: 2}\n") ==
          "in.yaml:7:39: error: jobs[0].gpus_per_node: expected 3 or no gpus_per_node: gpus: 3 "
          "runs on one node with gpus_per_node = gpus, got 2");
    // gpus: 16 on node_list [5, 6] with gpus_per_node: 1 ran 2 GPUs.
    CHECK(error_of(kHead + "jobs:\n  - {name: d, gpus: 16, node_list: [5, 6], gpus_per_node: 1}\n")
              .starts_with("in.yaml:7:59: error: jobs[0].gpus_per_node: expected 8 or no "
                           "gpus_per_node: gpus: 16 runs on 2 whole nodes of 8 GPUs, got 1; for 16 "
                           "nodes of 1 GPU give nodes: 16 and gpus_per_node: 1"));
    CHECK(error_of(kHead + "jobs:\n  - {name: e, gpus: 16, gpus_per_node: 8}\n") == "no error");
    CHECK(error_of(kHead + "jobs:\n  - {name: f, gpus: 16, gpus_per_node: 0}\n") == "no error");
  }

  TEST_CASE("jobs: trace.node_list is checked against the job's own node count") {
    // The machine probe loaded the first job at 1 node: "node index 1 does not exist: the
    // largest point has 1 node" for a 2-node job.
    const Scenario s = load_scenario_text(
        kHead + "jobs:\n  - {name: a, nodes: 2, trace: {node_list: [0, 1]}}\n", "in.yaml");
    REQUIRE(s.multi);
    CHECK(s.multi->jobs[0].scenario.trace_node_list == std::vector<int>{0, 1});
    const Scenario set = load_scenario_text(kHead + "jobs:\n  - {name: a, nodes: 2}\n", "in.yaml",
                                            parse_overrides({"jobs.0.trace.node_list=[0,1]"}));
    CHECK(set.multi->jobs[0].scenario.trace_node_list == std::vector<int>{0, 1});
    CHECK(error_of(kHead + "jobs:\n  - {name: a, nodes: 2, trace: {node_list: [0, 2]}}\n")
              .starts_with("in.yaml:7:48: error: jobs[0].trace.node_list[1]: node index 2 does "
                           "not exist"));
  }

  TEST_CASE("jobs: cluster.partition and cluster.nodes errors are at their key or --set") {
    const std::string head = "platform: hetero-v100-a100\nmodel: resnet50\n";
    const std::string jobs = "jobs:\n  - {name: a, nodes: 2}\n";
    const std::string why = "platform 'hetero-v100-a100' has no partition 'nope'";
    // Ignored (exit 0) unless cluster.nodes resized the machine, then at `cluster` (1:1 with
    // --set).
    const std::string file = error_of(head + "cluster: {partition: nope}\n" + jobs);
    CHECK(file.starts_with("in.yaml:3:22: error: cluster.partition: " + why));
    CHECK(error_of(head + "cluster: {nodes: 40, partition: nope}\n" + jobs)
              .starts_with("in.yaml:3:33: error: cluster.partition: " + why));
    CHECK(error_of(head + jobs, {"cluster.partition=nope"})
              .starts_with("--set cluster.partition=nope: error: cluster.partition: " + why));
    CHECK(error_of(head + jobs, {"cluster.partition=5"})
              .starts_with("--set cluster.partition=5: error: cluster.partition: platform "));
    // An empty value was reported at jobs[0].cluster.partition, a key that does not exist.
    CHECK(error_of(head + jobs, {"cluster.partition="})
              .starts_with("--set cluster.partition=: "
                           "error: cluster.partition: "));
    CHECK(error_of(head + jobs, {"cluster.nodes=1"})
              .starts_with("--set cluster.nodes=1: error: cluster.nodes: "));
  }

  TEST_CASE("jobs: an I/O job's request is a whole number of bytes") {
    const std::string mix =
        "name: mix\nplatform: summit\nmodel: resnet50\njobs:\n  - {name: a, nodes: 1}\n"
        "  - {name: r, kind: io, nodes: 1, read_rate: 1GBps, ";
    // 1.5 B was accepted (request_bytes 1.5) and read as 1 byte.
    CHECK(error_of(mix + "request_size: 1.5B}\n") ==
          "in.yaml:6:67: error: jobs[1].request_size: expected a whole number of bytes, got "
          "\"1.5B\" (1.5 bytes)");
    const Scenario s = load_scenario_text(mix + "request_size: 1.1KB}\n", "in.yaml");
    CHECK(s.multi->jobs[1].request_bytes == 1100.0);
  }

  TEST_CASE("a GPU without a peak for the precision's matrix ops is an error at precision") {
    // A platform's own V100 entry without tensor_fp16 at precision fp16 stopped each point in the
    // cost model ("GPU 'myv100' has no fp16 tensor-core peak", exit 4).
    const auto dir = std::filesystem::temp_directory_path() /
                     ("scalecast-mix-peak-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string platform = (dir / "p.yaml").string();
    {
      std::ofstream f(platform);
      f << R"(name: tiny
gpus:
  myv100: {fp64: 7.8TFLOPS, fp32: 15.7TFLOPS, memory: 16GB, memory_bandwidth: 900GBps, host_link: nvlink2}
node_types:
  n:
    cpu: {sockets: 1, cores_per_socket: 8}
    gpus: {type: myv100, count: 2}
    nics: {count: 1, bandwidth: 12.5GBps}
    links:
      - {class: nvlink, bandwidth: 50GBps, between: [[cpu0, gpu0], [cpu0, gpu1], [gpu0, gpu1]]}
      - {class: pcie, bandwidth: 16GBps, between: [[cpu0, nic0]]}
partitions:
  - {name: p, node_type: n, nodes: 4}
network:
  topology: fat_tree
  port_bandwidth: 12.5GBps
  levels: [{radix: 4}]
)";
    }
    const std::string head = "platform: " + platform + "\nmodel: resnet50\n";
    const std::string why =
        "precision: expected a precision every GPU the job may run on has a peak for: myv100 "
        "(node type n of tiny) has no fp16 tensor-core peak (add tensor_fp16 to its catalog "
        "entry, or use fp32), got \"fp16\"";
    CHECK(error_of(head + "precision: fp16\nnodes: [2]\n") == "in.yaml:3:12: error: " + why);
    CHECK(error_of(head + "nodes: [2]\n", {"precision=fp16"}) ==
          "--set precision=fp16: error: " + why);
    CHECK(error_of(head + "jobs:\n  - {name: a, nodes: 2, precision: fp16}\n") ==
          "in.yaml:4:36: error: jobs[0]." + why);
    // fp32, and bf16 and tf32 (priced at the fp32 rate without their tensor cores), run.
    for (const char* p : {"fp32", "bf16", "tf32"})
      CHECK(error_of(head + "precision: " + p + "\nnodes: [2]\n") == "no error");
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("run: an I/O job that starts after the training jobs ended is an error at its start") {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("scalecast-mix-late-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    {
      std::ofstream f(dir / "mix.yaml");
      f << R"(platform: summit
precision: fp16
iterations: 1
calibration: [calibration/data/deepbench-v100.yaml]
jobs:
  - {name: a, model: resnet50, batch_per_gpu: 32, nodes: 1}
  - {name: r, kind: io, nodes: 1, read_rate: 100GBps}
)";
    }
    const auto run = [&](const std::string& args) {
      const std::string cmd = kTool + " --quiet run " + (dir / "mix.yaml").string() + " " + args +
                              " > " + (dir / "out.txt").string() + " 2> " +
                              (dir / "err.txt").string();
      return WEXITSTATUS(std::system(cmd.c_str()));
    };
    // It read nothing: "read 0.00 of 100.00 GB/s asked", bytes_read 0, exit 0.
    CHECK(run("--set jobs.1.start=10s") == 1);
    const std::string err = slurp(dir / "err.txt");
    INFO(err);
    CHECK(err.starts_with(
        "--set jobs.1.start=10s: error: jobs[1].start: expected a start before the training "
        "jobs end: I/O job 'r' has no duration, so it reads while they run, and they ended "
        "before 10 s (give it a duration or an earlier start)"));
    // A small rate in a unit that fits it ("read 0.00 of 0.00 GB/s asked" for 1 B/s).
    CHECK(run("--set jobs.1.read_rate=1kBps --set jobs.1.request_size=1kB") == 0);
    const std::string table = slurp(dir / "out.txt");
    INFO(table);
    CHECK(table.find(" of 1 kB/s asked") != std::string::npos);
    CHECK(table.find("0.00 GB/s") == std::string::npos);
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("jobs: a parameter-server job is refused at its strategy, block or not") {
    // It could be named but never configured: "parameter_server: required with strategy
    // parameter_server" without the block, "jobs[0].parameter_server: unknown key" with it.
    const std::string why =
        ": expected data_parallel: parameter-server jobs are not available in a jobs list (the "
        "mix does not place their tasks); simulate one as a single-job scenario (no jobs, "
        "strategy: parameter_server and a parameter_server block)";
    const std::string bare =
        error_of(kHead + "jobs:\n  - {name: a, nodes: 2, strategy: parameter_server}\n");
    CHECK(bare == "in.yaml:7:35: error: jobs[0].strategy" + why);
    const std::string block = error_of(kHead +
                                       "jobs:\n  - name: a\n    nodes: 2\n"
                                       "    strategy: parameter_server\n"
                                       "    parameter_server: {tasks: 1}\n");
    CHECK(block == "in.yaml:9:15: error: jobs[0].strategy" + why);
    const std::string file =
        error_of(kHead + "strategy: parameter_server\njobs:\n  - {name: a, nodes: 2}\n");
    CHECK(file == "in.yaml:6:11: error: strategy" + why);
    CHECK(error_of(kHead + "jobs:\n  - {name: a, nodes: 2, strategy: data_parallel}\n") ==
          "no error");
  }

  TEST_CASE("sweep: a scenario with jobs is refused at its jobs key") {
    const auto err = std::filesystem::temp_directory_path() /
                     ("scalecast-mix-sweep-" + std::to_string(::getpid()));
    const std::string cmd = kTool + " sweep scenarios/summit-shared-jobs.yaml --out " +
                            (err.string() + ".d") + " > /dev/null 2> " + err.string();
    const int status = std::system(cmd.c_str());
    CHECK(WEXITSTATUS(status) == 1);
    const std::string message = slurp(err);
    INFO(message);
    CHECK(message.rfind("scenarios/summit-shared-jobs.yaml:", 0) == 0);
    CHECK(message.find(": error: jobs: sweep takes a single-job scenario") != std::string::npos);
    std::filesystem::remove(err);
    std::filesystem::remove_all(err.string() + ".d");
  }

  TEST_CASE("run: a job's missing calibration database is an error at its key, also for a point") {
    const auto dir =
        std::filesystem::temp_directory_path() / ("scalecast-mix-db-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto scenario = dir / "mix.yaml";
    {
      std::ofstream f(scenario);
      f << kHead
        << "jobs:\n  - {name: a, nodes: 1}\n  - {name: b, nodes: 1, calibration: "
           "[nosuch.yaml]}\n";
    }
    const auto err = dir / "err.txt";
    const auto run = [&](const std::string& args) {
      const std::string cmd = "cd " + dir.string() + " && " + kTool + " run mix.yaml " + args +
                              " > /dev/null 2> " + err.string();
      const int status = std::system(cmd.c_str());
      return WEXITSTATUS(status);
    };
    // Before, "nosuch.yaml: error: cannot open file" with no place in the scenario.
    CHECK(run("") == 1);
    CHECK(slurp(err).rfind("mix.yaml:8:39: error: jobs[1].calibration[0]: no calibration "
                           "database file 'nosuch.yaml'",
                           0) == 0);
    CHECK(run("--set 'jobs.1.calibration=[other.yaml]'") == 1);
    CHECK(slurp(err).rfind("--set jobs.1.calibration=[other.yaml]: error: jobs[1].calibration: no "
                           "calibration database file 'other.yaml'",
                           0) == 0);
    // A point process started on its own (as validate's children are) checks its inputs too.
    CHECK(run("--set 'jobs.1.calibration=[]' --set 'calibration=[gone.yaml]' --point 1 "
              "--point-gpus 1 --point-json p.json") == 1);
    CHECK(slurp(err).rfind("--set calibration=[gone.yaml]: error: calibration: no calibration "
                           "database file 'gone.yaml'",
                           0) == 0);
    std::filesystem::remove_all(dir);
  }

  TEST_CASE(
      "run: two single-node jobs share nothing (slowdown 1.000), jobs array, same bytes twice") {
    const auto dir =
        std::filesystem::temp_directory_path() / ("scalecast-mix-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto scenario = dir / "mix.yaml";
    {
      std::ofstream f(scenario);
      f << R"(platform: summit
precision: fp16
iterations: 1
calibration: [calibration/data/deepbench-v100.yaml]
jobs:
  - {name: a, model: resnet50, batch_per_gpu: 64, nodes: 1}
  - {name: b, model: resnet50, batch_per_gpu: 64, nodes: 1, start: 10ms}
  - {name: reader, kind: io, nodes: 1, read_rate: 5GBps, duration: 50ms}
)";
    }
    const std::string cmd = kTool + " --quiet run " + scenario.string() + " -j 2 --out " +
                            (dir / "out").string() + " > " + (dir / "table.txt").string();
    REQUIRE(std::system(cmd.c_str()) == 0);
    const auto summary = nlohmann::json::parse(slurp(dir / "out" / "summary.json"));
    REQUIRE(summary["jobs"].size() == 3);
    for (int k : {0, 1}) {
      const auto& j = summary["jobs"][k];
      INFO(j.dump());
      CHECK(j["kind"] == "training");
      CHECK(j["slowdown"].get<double>() == doctest::Approx(1.0).epsilon(1e-9));
      CHECK(j["iteration_time_s"].get<double>() > 0.0);
    }
    CHECK(summary["jobs"][1]["start_s"].get<double>() == doctest::Approx(0.01));
    CHECK(summary["jobs"][2]["kind"] == "io");
    // Whole requests within rate x duration, never more than asked: 5 GB/s x 50 ms = 14.9
    // requests of 16 MiB, so 14 are read over the 50 ms window (the 15th, issued at 46.9 ms,
    // used to end after the window and read more than asked in short windows).
    CHECK(summary["jobs"][2]["bytes_read"].get<double>() == 14.0 * 16 * 1048576);
    CHECK(summary["jobs"][2]["achieved_rate_Bps"].get<double>() ==
          doctest::Approx(14.0 * 16 * 1048576 / 0.05).epsilon(1e-9));
    CHECK(!slurp(dir / "out" / "jobs" / "a" / "iterations.csv").empty());
    CHECK(!slurp(dir / "out" / "jobs" / "b" / "ops.csv").empty());
    // Deterministic: a second run gives the same bytes.
    const std::string again = kTool + " --quiet run " + scenario.string() + " -j 2 --out " +
                              (dir / "again").string() + " > /dev/null";
    REQUIRE(std::system(again.c_str()) == 0);
    for (const char* f : {"summary.json", "jobs/a/trace.json", "jobs/b/iterations.csv"})
      CHECK(slurp(dir / "out" / f) == slurp(dir / "again" / f));
    const std::string table = slurp(dir / "table.txt");
    INFO(table);
    CHECK(table.find("slowdown") != std::string::npos);
    std::filesystem::remove_all(dir);
  }
}
