// What the real predictor can express: sequence lengths reach the scenario (seq_len key) for
// token models and are refused for image models; the public set's BERT seq_len 512 series are
// simulated (not skipped) by a protocol run whose predictor applies the real checks.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>

#include "common/config_error.hpp"
#include "common/interrupt.hpp"
#include "sim/scenario.hpp"
#include "validation/protocol.hpp"
#include "validation/report.hpp"
#include "validation/run_predictor.hpp"

using namespace scalecast::validation;

namespace {

Configuration bert(int seq_len) {
  Configuration c;
  c.system = "dgx1-v100";
  c.model = "bert_large";
  c.seq_len = seq_len;
  c.precision = "amp_fp16";
  c.strategy = Strategy::kAllreduce;
  c.comm = {"nccl"};
  c.batch_per_gpu = 4;
  c.gpus = 32;
  c.nodes = 4;
  return c;
}

// The real expressibility check and scenario text, then a closed-form throughput (so the
// protocol runs without the engine): per-GPU time grows with the sequence length.
class CheckingPredictor : public Predictor {
 public:
  Prediction predict(const Configuration& c) const override {
    check_expressible(c);
    const std::string yaml = scenario_yaml(c);
    if (c.seq_len &&
        yaml.find("seq_len: " + std::to_string(*c.seq_len) + "\n") == std::string::npos)
      throw std::logic_error("scenario without seq_len:\n" + yaml);
    Prediction p;
    const double tokens = c.seq_len ? *c.seq_len : 1.0;
    p.iteration_time_s =
        c.batch_per_gpu * tokens / (1e5 * c.framework_efficiency) + 0.001 * c.nodes;
    p.throughput_samples_per_s = c.gpus * c.batch_per_gpu / p.iteration_time_s;
    return p;
  }
};

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("scenario_yaml writes seq_len after the model for BERT configurations") {
    const std::string y = scenario_yaml(bert(512));
    INFO(y);
    CHECK(y.find("model: \"bert_large\"\nseq_len: 512\n") != std::string::npos);
    Configuration cnn = bert(512);
    cnn.model = "resnet50";
    cnn.seq_len.reset();
    CHECK(scenario_yaml(cnn).find("seq_len") == std::string::npos);
  }

  TEST_CASE("scenario_yaml passes pytorch and mxnet on as the scenario framework") {
    // The framework sets the scenario's bucketing and fixed costs (scenarios/README.md
    // "Gradient bucketing"); tensorflow is not passed on (validation/README.md "Scenario
    // mapping": its public sources ran three different Horovod set-ups).
    Configuration c = bert(128);
    c.framework = "pytorch";
    CHECK(scenario_yaml(c).find("\nframework: pytorch\n") != std::string::npos);
    c.framework = "mxnet";
    CHECK(scenario_yaml(c).find("\nframework: mxnet\n") != std::string::npos);
    for (const char* other : {"tensorflow", "caffe2", "chainer", "nnl", ""}) {
      c.framework = other;
      CHECK(scenario_yaml(c).find("framework:") == std::string::npos);
    }
    // The scenario text loads: the key is one the scenario loader knows.
    c.framework = "pytorch";
    CHECK_NOTHROW(scalecast::sim::load_scenario_text(scenario_yaml(c), "v.yaml"));
  }

  TEST_CASE("scenario_yaml writes parameter servers, MPI on the CPU and TCP as scenario keys") {
    Configuration c;
    c.system = "uber-pascal-roce25";
    c.model = "vgg16";
    c.precision = "fp32";
    c.batch_per_gpu = 64;
    c.gpus = 16;
    c.nodes = 4;
    // Formerly skipped (tcp, mpi_cpu): now every comm of the public set is expressible.
    c.strategy = Strategy::kParameterServerCpu;
    c.comm = {"tcp"};
    CHECK_NOTHROW(check_expressible(c));
    std::string y = scenario_yaml(c);
    INFO(y);
    // tf_cnn_benchmarks' distributed mode places the variables greedily by bytes.
    CHECK(y.find("strategy: parameter_server\nparameter_server:\n  tasks: 4\n  placement: "
                 "colocated\n  mode: sync\n  variables: cpu\n  sharding: greedy\n") !=
          std::string::npos);
    CHECK(scalecast::sim::load_scenario_text(y, "v.yaml").parameter_server.sharding ==
          scalecast::sim::PsSharding::kGreedy);
    CHECK(y.find("allreduce:\n  transport: tcp\n") != std::string::npos);
    CHECK_NOTHROW(scalecast::sim::load_scenario_text(y, "v.yaml"));
    c.strategy = Strategy::kParameterServer;
    CHECK(scenario_yaml(c).find("  variables: gpu\n") != std::string::npos);
    // Across servers every received tensor goes through gRPC (the engine's default rate); on
    // one server tf_cnn_benchmarks keeps all towers in one process, so nothing does (CL-4.fp32
    // could not be fitted with loopback gRPC charged).
    CHECK(scenario_yaml(c).find("receive_rate") == std::string::npos);
    c.nodes = 1;
    c.gpus = 4;
    y = scenario_yaml(c);
    CHECK(y.find("  variables: gpu\n  sharding: greedy\n  receive_rate: 0GBps\n") !=
          std::string::npos);
    CHECK(scalecast::sim::load_scenario_text(y, "v.yaml").parameter_server.receive_Bps == 0.0);
    c.nodes = 4;
    c.gpus = 16;
    c.strategy = Strategy::kAllreduce;
    c.comm = {"mpi_cpu", "tcp"};
    CHECK_NOTHROW(check_expressible(c));
    y = scenario_yaml(c);
    CHECK(y.find("strategy: data_parallel\n") != std::string::npos);
    CHECK(y.find("allreduce:\n  library: mpi_cpu\n  transport: tcp\n") != std::string::npos);
    CHECK_NOTHROW(scalecast::sim::load_scenario_text(y, "v.yaml"));
    c.comm = {"nccl", "rdma"};
    CHECK(scenario_yaml(c).find("allreduce:\n  library: nccl\n") != std::string::npos);
    CHECK(scenario_yaml(c).find("allreduce:\n  library: nccl\n  transport: native\n") !=
          std::string::npos);
    c.comm = {"nccl"};
    CHECK(scenario_yaml(c).find("transport") == std::string::npos);
  }

  TEST_CASE(
      "scenario_yaml writes the point's accumulation and exchange settings as scenario keys") {
    // validation file `accumulation` and `allreduce` (FORMAT.md section 2) -> the scenario's
    // `accumulation` and `allreduce.*`, after the framework preset, which they override.
    Configuration c = bert(128);
    c.framework = "pytorch";
    CHECK(scenario_yaml(c).find("accumulation") == std::string::npos);
    c.accumulation = 16;
    c.allreduce = {{"bucketing", "packs"}};
    std::string y = scenario_yaml(c);
    CHECK(y.find("\naccumulation: 16\n") != std::string::npos);
    CHECK(y.find("allreduce:\n  library: nccl\n  bucketing: packs\n") != std::string::npos);
    scalecast::sim::Scenario s = scalecast::sim::load_scenario_text(y, "v.yaml");
    CHECK(s.accumulation == 16);
    CHECK(s.allreduce.bucketing == scalecast::sim::Bucketing::kPacks);
    c.accumulation = 1;
    c.allreduce = {{"bucketing", "ddp"}, {"fusion_buffer", "500MB"}, {"first_bucket", "500MB"}};
    s = scalecast::sim::load_scenario_text(scenario_yaml(c), "v.yaml");
    CHECK(s.accumulation == 1);
    CHECK(s.allreduce.bucketing == scalecast::sim::Bucketing::kDdp);
    CHECK(s.allreduce.fusion_bytes == doctest::Approx(5e8));
    CHECK(s.allreduce.first_bucket_bytes == doctest::Approx(5e8));
  }

  TEST_CASE("check_expressible accepts BERT seq_len 512 and rejects seq_len for a CNN") {
    CHECK_NOTHROW(check_expressible(bert(512)));
    CHECK_NOTHROW(check_expressible(bert(128)));
    Configuration cnn = bert(512);
    cnn.model = "resnet50";
    CHECK_THROWS_WITH_AS(check_expressible(cnn),
                         "seq_len 512 is given but resnet50 takes images, not token sequences",
                         Unsupported);
    cnn.seq_len.reset();
    CHECK_NOTHROW(check_expressible(cnn));
    std::string too_long;
    try {
      check_expressible(bert(1024));
    } catch (const Unsupported& e) {
      too_long = e.what();
    }
    INFO(too_long);
    CHECK(too_long.starts_with("bert_large cannot take sequence length 1024: "));
    CHECK(too_long.find("exceeds the 512 position rows") != std::string::npos);
    Configuration unknown = bert(512);
    unknown.model = "bert_huge";
    CHECK_THROWS_AS(check_expressible(unknown), Unsupported);
  }

  TEST_CASE("public BERT seq_len 512 points are simulated and their anchors fitted") {
    const ValidationFile file = load_validation_file("validation/public.yaml");
    ValidationFile bert_series;
    bert_series.path = file.path;
    for (const ValidationPoint& p : file.points) {
      if (p.model == "bert_large") bert_series.points.push_back(p);
    }
    CheckingPredictor predictor;
    const ValidationRun run = run_protocol(bert_series, predictor);
    std::set<std::string> simulated, fitted;
    for (const PointResult& r : run.points) {
      INFO(r.point->id << ": " << r.skip_reason);
      CHECK(r.simulated);
      if (r.simulated && r.point->seq_len == 512) simulated.insert(r.point->id);
    }
    for (const AnchorFit& a : run.anchors) {
      INFO(a.id << ": " << a.skip_reason);
      CHECK(a.fitted);
      if (a.fitted) fitted.insert(a.id);
    }
    CHECK(simulated ==
          std::set<std::string>{"D1-13.n4", "D1-13.n16", "D2-11.n4", "D2-11.n16", "D2-11.n64"});
    for (const char* anchor : {"D1-13.n1", "D2-11.n1", "D2-12.s512"}) {
      INFO(anchor);
      CHECK(fitted.count(anchor) == 1);
    }
  }
}

TEST_SUITE("unit") {
  TEST_CASE("scenario_yaml lets the machine grow to the point's node count") {
    Configuration c = bert(128);
    c.gpus = 3'584;
    c.nodes = 448;
    const std::string y = scenario_yaml(c);
    CHECK(y.find("nodes: 448\n") != std::string::npos);
    CHECK(y.find("cluster:\n  nodes: fit\n") != std::string::npos);
  }

  TEST_CASE("a child that fails unexpectedly is an error carrying its output tail") {
    // A stand-in `scalecast` that crashes the way the engine did on an oversized point.
    const auto dir = std::filesystem::temp_directory_path() / "scalecast-test-crashing-child";
    std::filesystem::create_directories(dir);
    const std::string exe = (dir / "scalecast").string();
    {
      std::ofstream script(exe);
      script << "#!/bin/sh\necho 'loading'\necho 'first' >&2\necho 'second' >&2\n"
                "echo 'terminate: cannot build 896 nodes' >&2\nexit 4\n";
    }
    std::filesystem::permissions(exe, std::filesystem::perms::owner_all);
    RunPredictor predictor(exe, (dir / "work").string(), {});
    predictor.use_servers(false);
    CHECK_THROWS_WITH_AS(
        predictor.predict(bert(128)),
        "scalecast run exited 4: first | second | terminate: cannot build 896 nodes",
        std::runtime_error);
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("a child that refuses its scenario is a skip that says the scenario was generated") {
    // The refusal cited "scenario.yaml:13:3" as if the user had written that file.
    const auto dir = std::filesystem::temp_directory_path() / "scalecast-test-refusing-child";
    std::filesystem::create_directories(dir);
    const std::string exe = (dir / "scalecast").string();
    {
      std::ofstream script(exe);
      script << "#!/bin/sh\necho \"$3:13:3: error: allreduce.transport: no RDMA\" >&2\nexit 1\n";
    }
    std::filesystem::permissions(exe, std::filesystem::perms::owner_all);
    RunPredictor predictor(exe, (dir / "work").string(), {});
    predictor.use_servers(false);
    CHECK_THROWS_WITH_AS(predictor.predict(bert(128)),
                         "the simulator refused the scenario validate wrote for it: "
                         "scenario.yaml:13:3: error: allreduce.transport: no RDMA",
                         Unsupported);
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("the fitted efficiency range is the range the scenario accepts") {
    Configuration c = bert(128);
    const auto load = [&](double e) {
      c.framework_efficiency = e;
      scalecast::sim::load_scenario_text(scenario_yaml(c), "s.yaml");
    };
    CHECK_NOTHROW(load(kMinFitEfficiency));
    CHECK_NOTHROW(load(kMaxFitEfficiency));
    CHECK_THROWS(load(kMinFitEfficiency * 0.99));
    CHECK_THROWS(load(kMaxFitEfficiency * 1.01));
  }

  TEST_CASE("--work-dir is created before any simulation, or refused with the reason") {
    const auto dir = std::filesystem::temp_directory_path() / "scalecast-test-work-dir";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string file = (dir / "afile").string();
    std::ofstream(file) << "x";
    // Under a regular file: every point used to fail (exit 4) after the run had started.
    CHECK_THROWS_WITH_AS(
        create_work_dir("--work-dir", file + "/sub"),
        ("--work-dir: error: " + file + "/sub: cannot create the folder: Not a directory").c_str(),
        scalecast::common::ConfigError);
    CHECK_THROWS_WITH_AS(create_work_dir("--work-dir", file),
                         ("--work-dir: error: " + file +
                          ": is not a folder; give a folder to keep the simulations in (created "
                          "if missing)")
                             .c_str(),
                         scalecast::common::ConfigError);
    create_work_dir("--work-dir", (dir / "new" / "work").string());
    CHECK(std::filesystem::is_directory(dir / "new" / "work"));
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("a report that cannot be written is an error naming the option, path and reason") {
    const auto dir = std::filesystem::temp_directory_path() / "scalecast-test-report";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string file = (dir / "afile").string();
    std::ofstream(file) << "x";
    CHECK_THROWS_WITH_AS(
        write_report_file("--json", file + "/v.json", "{}"),
        ("--json: error: " + file + "/v.json: cannot create folder: Not a directory").c_str(),
        scalecast::common::ConfigError);
    write_report_file("--json", (dir / "v.json").string(), "{}\n");
    std::ifstream in(dir / "v.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == "{}\n");
    // A full device: the write failed and was reported as success, the device replaced by a
    // plain file. Only where /dev/full is the device.
    if (std::filesystem::is_character_file("/dev/full")) {
      CHECK_THROWS_WITH_AS(write_report_file("--json", "/dev/full", "{}\n"),
                           "--json: error: /dev/full: cannot write: No space left on device",
                           scalecast::common::ConfigError);
      CHECK(std::filesystem::is_character_file("/dev/full"));
    }
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("a child killed by a signal is named by it, SIGKILL with its usual cause") {
    CHECK(scalecast::common::describe_child_exit(4) == "exited 4");
    CHECK(scalecast::common::describe_child_exit(134) == "was killed by signal 6 (SIGABRT)");
    // Every named signal by its name (glibc's table), not only the five that were spelled out.
    CHECK(scalecast::common::describe_child_exit(128 + SIGUSR1) ==
          fmt::format("was killed by signal {} (SIGUSR1)", SIGUSR1));
    CHECK(scalecast::common::describe_child_exit(128 + SIGBUS) ==
          fmt::format("was killed by signal {} (SIGBUS)", SIGBUS));
    // A real-time signal has a number only; a status past the last signal is an exit code.
    CHECK(scalecast::common::describe_child_exit(128 + SIGRTMIN + 1) ==
          fmt::format("was killed by signal {}", SIGRTMIN + 1));
    CHECK(scalecast::common::describe_child_exit(255) == "exited 255");
    CHECK(scalecast::common::describe_child_exit(137).rfind(
              "was killed by signal 9 (SIGKILL): no message of its own; usually the kernel's "
              "out-of-memory killer",
              0) == 0);
    // End to end: a stand-in that kills itself as the out-of-memory killer would (an 800,000-GPU
    // point peaked at 24 GB on a 24 GB machine and ended as "exited 137: (no output)").
    const auto dir = std::filesystem::temp_directory_path() / "scalecast-test-killed-child";
    std::filesystem::create_directories(dir);
    const std::string exe = (dir / "scalecast").string();
    {
      std::ofstream script(exe);
      script << "#!/bin/sh\nkill -9 $$\n";
    }
    std::filesystem::permissions(exe, std::filesystem::perms::owner_all);
    RunPredictor predictor(exe, (dir / "work").string(), {});
    predictor.use_servers(false);
    try {
      predictor.predict(bert(128));
      FAIL("expected an error");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).rfind("scalecast run was killed by signal 9 (SIGKILL)", 0) == 0);
    }
    std::filesystem::remove_all(dir);
  }
}
