#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/config_error.hpp"
#include "platforms/platform.hpp"
#include "validation/predictor.hpp"
#include "validation/validation_file.hpp"

using scalecast::common::ConfigError;
using namespace scalecast::validation;

namespace {

// A minimal well-formed file; tests replace one line to break it.
const std::string kGood =
    "schema: scalecast-validation/1\n"  // 1
    "points:\n"                         // 2
    "  - id: A1\n"                      // 3
    "    system: dgx1-v100\n"           // 4
    "    model: resnet50\n"             // 5
    "    precision: fp32\n"             // 6
    "    framework: tensorflow\n"       // 7
    "    strategy: none\n"              // 8
    "    batch_per_gpu: 128\n"          // 9
    "    gpus: 1\n"                     // 10
    "    nodes: 1\n"                    // 11
    "    measured:\n"                   // 12
    "      throughput: 412\n"           // 13
    "    role: anchor\n"                // 14
    "    source: test\n"                // 15
    "  - id: P1\n"                      // 16
    "    system: dgx1-v100\n"           // 17
    "    model: resnet50\n"             // 18
    "    precision: fp32\n"             // 19
    "    framework: tensorflow\n"       // 20
    "    strategy: allreduce\n"         // 21
    "    comm: [nccl]\n"                // 22
    "    batch_per_gpu: 128\n"          // 23
    "    gpus: 16\n"                    // 24
    "    nodes: 2\n"                    // 25
    "    measured:\n"                   // 26
    "      scaling_efficiency: 0.9\n"   // 27
    "    role: predict\n"               // 28
    "    anchor: A1\n"                  // 29
    "    source: test\n"                // 30
    "context:\n"                        // 31
    "  - id: C1\n"                      // 32
    "    statement: x\n";               // 33

std::string replace_line(const std::string& text, int line, const std::string& replacement) {
  std::string out;
  int n = 1;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::string current = text.substr(start, end - start);
    out += (n == line ? replacement : current) + "\n";
    start = end + 1;
    ++n;
  }
  return out;
}

std::string error_of(const std::string& text) {
  try {
    parse_validation_text(text, "v.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("well-formed file loads with every field") {
    const ValidationFile f = parse_validation_text(kGood, "v.yaml");
    REQUIRE(f.points.size() == 2);
    const ValidationPoint& p = f.points[1];
    CHECK(p.id == "P1");
    CHECK(p.role == Role::kPredict);
    CHECK(p.anchor == "A1");
    CHECK(p.strategy == Strategy::kAllreduce);
    CHECK(p.comm == std::vector<std::string>{"nccl"});
    CHECK(p.gpus_per_node() == 8);
    CHECK(p.measured.kind == MeasuredKind::kScalingEfficiency);
    CHECK(p.measured.value == doctest::Approx(0.9));
    CHECK(p.line == 16);
    CHECK(f.context_count == 1);
  }

  TEST_CASE("wrong schema string") {
    CHECK(error_of(replace_line(kGood, 1, "schema: scalecast-validation/2")) ==
          "v.yaml:1:9: error: schema: expected \"scalecast-validation/1\", got "
          "\"scalecast-validation/2\"");
  }

  TEST_CASE("unknown key in a point suggests the right one") {
    CHECK(error_of(replace_line(kGood, 9, "    batch_per_gpus: 128")) ==
          "v.yaml:9:5: error: points[0].batch_per_gpus: unknown key (did you mean "
          "'batch_per_gpu'?)");
  }

  TEST_CASE("an id with a control or bidirectional-override character is refused") {
    // validate printed them raw: BEL rang the terminal, U+202E reversed the rest of the row.
    const std::string where =
        "v.yaml:3:9: error: points[0].id: expected an id without control or "
        "bidirectional-override characters ";
    CHECK(error_of(replace_line(kGood, 3, "  - id: \"A\\u0007\"")) ==
          where + "(byte 2 of it is one: 0x07)");
    CHECK(error_of(replace_line(kGood, 3, "  - id: \"A\\u202Eevil\"")) ==
          where + "(byte 2 of it is one: 0xe2)");
    CHECK(error_of(replace_line(kGood, 3, "  - id: \"A\\u0085\"")) ==
          where + "(byte 2 of it is one: 0xc2)");
    // Other scripts are fine (the anchor that named A1 is then unknown, a later check).
    CHECK(error_of(replace_line(kGood, 3, "  - id: \"\u0422\u0422-\u041d100\""))
              .find("anchor: no point with id \"A1\"") != std::string::npos);
  }

  TEST_CASE("missing required key points at the point") {
    CHECK(error_of(replace_line(kGood, 15, "")) ==
          "v.yaml:3:5: error: points[0]: missing required key 'source'");
  }

  TEST_CASE("bad enum value lists the allowed values") {
    CHECK(error_of(replace_line(kGood, 6, "    precision: fp16")) ==
          "v.yaml:6:16: error: points[0].precision: expected one of fp32, amp_fp16, tf32, "
          "unknown, got \"fp16\"");
  }

  TEST_CASE("gpus not a multiple of nodes") {
    CHECK(error_of(replace_line(kGood, 25, "    nodes: 3")) ==
          "v.yaml:25:12: error: points[1].nodes: gpus (16) must be a whole multiple of nodes "
          "(3)");
  }

  TEST_CASE("strategy none with several GPUs") {
    CHECK(error_of(replace_line(kGood, 21, "    strategy: none")) ==
          "v.yaml:21:15: error: points[1].strategy: strategy \"none\" is used exactly when gpus "
          "is 1 (gpus is 16)");
  }

  TEST_CASE("measured with both kinds") {
    CHECK(error_of(replace_line(kGood, 27, "      scaling_efficiency: 0.9\n      throughput: 5")) ==
          "v.yaml:27:7: error: points[1].measured: expected exactly one of throughput, "
          "scaling_efficiency");
  }

  TEST_CASE("a throughput outside 0.001 to 1e12 samples/s") {
    // A denormal anchor throughput made the fit fail in a temporary scenario, and validate
    // exited 0 with nothing validated; 1e308 printed a 300-digit measurement (CLI fuzzing).
    for (const char* bad : {"1e-320", "0", "-5", "1e308"}) {
      const std::string e =
          error_of(replace_line(kGood, 13, std::string("      throughput: ") + bad));
      INFO(e);
      CHECK(e.rfind("v.yaml:13:19: error: points[0].measured.throughput: expected a throughput "
                    "(samples/s) from 0.001 to 1e+12, got ",
                    0) == 0);
    }
    CHECK(error_of(replace_line(kGood, 13, "      throughput: 1e12")) == "<no error>");
  }

  TEST_CASE("efficiency above one") {
    CHECK(error_of(replace_line(kGood, 27, "      scaling_efficiency: 1.2")) ==
          "v.yaml:27:27: error: points[1].measured.scaling_efficiency: expected a fraction from "
          "0.001 to 1, got 1.2");
  }

  TEST_CASE("negative batch") {
    CHECK(error_of(replace_line(kGood, 9, "    batch_per_gpu: -4")) ==
          "v.yaml:9:20: error: points[0].batch_per_gpu: expected at least 1 (a whole number from "
          "1 to 1,000,000,000), got -4");
  }

  TEST_CASE("anchor that does not exist") {
    CHECK(error_of(replace_line(kGood, 29, "    anchor: A2")) ==
          "v.yaml:29:13: error: points[1].anchor: no point with id \"A2\" in this file");
  }

  TEST_CASE("anchor with a different key") {
    CHECK(error_of(replace_line(kGood, 20, "    framework: pytorch")) ==
          "v.yaml:29:13: error: points[1].anchor: anchor \"A1\" has key (dgx1-v100, resnet50, "
          "-, fp32, tensorflow), this point has (dgx1-v100, resnet50, -, fp32, pytorch)");
  }

  TEST_CASE("predict point without anchor") {
    CHECK(error_of(replace_line(kGood, 29, "")) ==
          "v.yaml:28:11: error: points[1].role: a predict point needs an 'anchor' key");
  }

  TEST_CASE("duplicate point id") {
    CHECK(error_of(replace_line(kGood, 16, "  - id: A1")) ==
          "v.yaml:16:9: error: points[1].id: duplicate id \"A1\" (first at line 3)");
  }

  TEST_CASE("unknown top-level key") {
    CHECK(error_of(replace_line(kGood, 31, "contexts:")) ==
          "v.yaml:31:1: error: contexts: unknown key (did you mean 'context'?)");
  }

  TEST_CASE("context entry without id") {
    CHECK(error_of(replace_line(kGood, 32, "  - idx: C1")) ==
          "v.yaml:32:5: error: context[0]: missing required key 'id'");
  }

  TEST_CASE("a scaling efficiency below 0.001 or above 1 is an error at the key") {
    // 1e-310 printed an error of +inf and a MAPE of inf with exit 0.
    for (const char* bad : {"1e-310", "0", "1.01", "-0.5"}) {
      INFO(bad);
      CHECK(error_of(replace_line(kGood, 27, std::string("      scaling_efficiency: ") + bad)) ==
            std::string("v.yaml:27:27: error: points[1].measured.scaling_efficiency: expected a "
                        "fraction from 0.001 to 1, got ") +
                bad);
    }
    CHECK(error_of(replace_line(kGood, 27, "      scaling_efficiency: 0.001")) == "<no error>");
  }

  TEST_CASE("comm with an unknown transport") {
    CHECK(error_of(replace_line(kGood, 22, "    comm: [nccl, gloo]")) ==
          "v.yaml:22:18: error: points[1].comm[1]: expected one of nccl, mpi_cpu, tcp, rdma, got "
          "\"gloo\"");
  }

  TEST_CASE("comm naming two libraries, two transports or a word twice is refused at the key") {
    // FORMAT.md section 2: one library and one transport. [nccl, mpi_cpu] simulated mpi_cpu
    // alone; [tcp, rdma] was refused at a line of the scenario validate wrote.
    CHECK(error_of(replace_line(kGood, 22, "    comm: [nccl, mpi_cpu]")) ==
          "v.yaml:22:18: error: points[1].comm[1]: nccl and mpi_cpu are two libraries (GPU "
          "collectives, MPI reducing on the CPU); expected at most one of them");
    CHECK(error_of(replace_line(kGood, 22, "    comm: [tcp, rdma]")) ==
          "v.yaml:22:17: error: points[1].comm[1]: tcp and rdma are two transports; expected at "
          "most one of them");
    // A block list: the entry that conflicts, not the list's first line.
    CHECK(error_of(replace_line(kGood, 22, "    comm:\n      - nccl\n      - rdma\n      - tcp")) ==
          "v.yaml:25:9: error: points[1].comm[2]: tcp and rdma are two transports; expected at "
          "most one of them");
    CHECK(error_of(replace_line(kGood, 22, "    comm: [mpi_cpu, tcp, nccl]"))
              .find("nccl and mpi_cpu are two libraries") != std::string::npos);
    CHECK(error_of(replace_line(kGood, 22, "    comm: [nccl, tcp, nccl]")) ==
          "v.yaml:22:23: error: points[1].comm[2]: \"nccl\" is listed twice");
    CHECK(error_of(replace_line(kGood, 22, "    comm: []")) ==
          "v.yaml:22:11: error: points[1].comm: expected one or more of nccl, mpi_cpu, tcp, rdma "
          "(leave comm out where the source does not say)");
    for (const char* ok : {"[nccl, rdma]", "[mpi_cpu, tcp]", "[tcp]", "[nccl]"}) {
      INFO(ok);
      CHECK(error_of(replace_line(kGood, 22, std::string("    comm: ") + ok)) == "<no error>");
    }
  }

  TEST_CASE("baseline_gpus is fewer GPUs than the point, in whole nodes of its GPUs per node") {
    // FORMAT.md section 5.4: B is P (16 GPUs on 2 nodes, 8 per node) reduced to baseline_gpus
    // with the same GPUs per node. 64 was simulated and scored (efficiency above 1); 3 GPUs of
    // 4-GPU nodes was simulated as one node of 3.
    const auto with = [](const std::string& b) {
      return error_of(
          replace_line(kGood, 27, "      scaling_efficiency: 0.9\n      baseline_gpus: " + b));
    };
    CHECK(with("64") ==
          "v.yaml:28:22: error: points[1].measured.baseline_gpus: expected fewer GPUs than the "
          "point's gpus (16): the baseline is the point reduced to fewer GPUs, got 64");
    CHECK(with("16").find("expected fewer GPUs than the point's gpus (16)") != std::string::npos);
    CHECK(with("3") ==
          "v.yaml:28:22: error: points[1].measured.baseline_gpus: expected 1 or a whole multiple "
          "of the point's 8 GPUs per node (gpus 16 / nodes 2): the baseline keeps the GPUs per "
          "node, got 3");
    CHECK(with("12").find("whole multiple of the point's 8 GPUs per node") != std::string::npos);
    CHECK(with("8") == "<no error>");
    CHECK(with("1") == "<no error>");  // a single GPU, the usual baseline of a scaling table
  }

  TEST_CASE("a point remembers where its system, model and measured value were written") {
    const ValidationFile f = parse_validation_text(kGood, "v.yaml");
    CHECK(f.points[1].system_at.reason("x") == "v.yaml:17:13: points[1].system: x");
    CHECK(f.points[1].model_at.reason("x") == "v.yaml:18:12: points[1].model: x");
    CHECK(f.points[0].measured_at.reason("x") == "v.yaml:13:19: points[0].measured.throughput: x");
    CHECK(f.points[1].measured_at.key == "points[1].measured.scaling_efficiency");
    CHECK(f.points[1].unsimulatable.empty());
  }

  TEST_CASE("accumulation and the exchange settings a source states") {
    // FORMAT.md section 2: optional; absent = one exchange per step and the framework's rule.
    CHECK(parse_validation_text(kGood, "v.yaml").points[1].accumulation == 1);
    CHECK(parse_validation_text(kGood, "v.yaml").points[1].allreduce.empty());
    const std::string with = replace_line(
        kGood, 23,
        "    batch_per_gpu: 128\n    accumulation: 4\n    allreduce:\n      bucketing: ddp\n"
        "      fusion_buffer: 500MB\n      first_bucket: 500MB\n      after_backward: true");
    const ValidationPoint p = parse_validation_text(with, "v.yaml").points[1];
    CHECK(p.accumulation == 4);
    using Pairs = std::vector<std::pair<std::string, std::string>>;
    CHECK(p.allreduce == Pairs{{"bucketing", "ddp"},
                               {"fusion_buffer", "500MB"},
                               {"first_bucket", "500MB"},
                               {"after_backward", "true"}});
  }

  TEST_CASE("tokens_per_sample: an unpadded anchor and a padded prediction share the anchor key") {
    // FORMAT.md section 2: an unpadded run computes fewer tokens per sample than seq_len; the
    // simulation runs that many, the anchor key keeps seq_len.
    const std::string bert = "    model: bert_large\n    seq_len: 512";
    std::string text = replace_line(kGood, 5, bert + "\n    tokens_per_sample: 256");
    text = replace_line(text, 20, bert);  // line 18 of kGood, two lines further down now
    const ValidationFile f = parse_validation_text(text, "v.yaml");
    REQUIRE(f.points.size() == 2);
    CHECK(f.points[0].tokens_per_sample == 256);
    CHECK(!f.points[1].tokens_per_sample);
    CHECK(configuration_of(f.points[0], ".").seq_len == 256);
    CHECK(configuration_of(f.points[1], ".").seq_len == 512);
    const auto with = [&](const std::string& line) {
      return error_of(replace_line(kGood, 5, bert + "\n" + line));
    };
    CHECK(with("    tokens_per_sample: 513") ==
          "v.yaml:7:24: error: points[0].tokens_per_sample: expected at most seq_len (512), got "
          "513");
    CHECK(with("    tokens_per_sample: 0").find("points[0].tokens_per_sample: expected") !=
          std::string::npos);
    CHECK(with("    tokens_per_sample: 2.5").find("points[0].tokens_per_sample") !=
          std::string::npos);
    CHECK(error_of(replace_line(kGood, 5, "    model: resnet50\n    tokens_per_sample: 100")) ==
          "v.yaml:6:24: error: points[0].tokens_per_sample: expected only with seq_len (the length "
          "it is at most)");
    // attention: how the recipe ran it, fused or unfused, carried to the scenario.
    const ValidationFile fused = parse_validation_text(
        replace_line(text, 6, "    seq_len: 512\n    attention: fused"), "v.yaml");
    CHECK(fused.points[0].fused_attention);
    CHECK(!fused.points[1].fused_attention);
    CHECK(configuration_of(fused.points[0], ".").fused_attention);
    CHECK(
        with("    attention: flash").find("points[0].attention: expected one of fused, unfused") !=
        std::string::npos);
    CHECK(error_of(replace_line(kGood, 5, "    model: resnet50\n    attention: fused")) ==
          "v.yaml:6:16: error: points[0].attention: expected only with seq_len (a model with "
          "attention layers)");
  }

  TEST_CASE("bad accumulation and exchange settings are refused where they are written") {
    const auto at23 = [](const std::string& lines) {
      return error_of(replace_line(kGood, 23, "    batch_per_gpu: 128\n" + lines));
    };
    CHECK(at23("    accumulation: 0") ==
          "v.yaml:24:19: error: points[1].accumulation: expected at least 1 (a whole number from 1 "
          "to 4,096), got 0");
    CHECK(at23("    accumulation: 5000").find("from 1 to 4,096") != std::string::npos);
    CHECK(at23("    accumulation: 2.5").find("points[1].accumulation") != std::string::npos);
    CHECK(at23("    allreduce:\n      bucketing: ring") ==
          "v.yaml:25:18: error: points[1].allreduce.bucketing: expected one of fusion, ddp, "
          "packs, got \"ring\"");
    CHECK(at23("    allreduce:\n      bucketing: packs\n      first_bucket: 1MB") ==
          "v.yaml:26:21: error: points[1].allreduce.first_bucket: expected only with "
          "bucketing: ddp");
    CHECK(at23("    allreduce:\n      bucketing: packs\n      fusion_buffer: 1MB")
              .find("not used with bucketing: packs") != std::string::npos);
    CHECK(at23("    allreduce:\n      fusion_buffer: -3MB").find("fusion_buffer") !=
          std::string::npos);
    CHECK(at23("    allreduce:\n      fusion_buffer: 0MB").find("fusion_buffer") !=
          std::string::npos);
    CHECK(at23("    allreduce:\n      packs: 2").find("expected only with bucketing: packs") !=
          std::string::npos);
    CHECK(at23("    allreduce:\n      after_backward: maybe").find("after_backward") !=
          std::string::npos);
    CHECK(at23("    allreduce:\n      cycle_time: 5ms").find("cycle_time") != std::string::npos);
    CHECK(at23("    allreduce: packs").find("expected a map") != std::string::npos);
    // Only an all-reduce point exchanges gradients this way.
    CHECK(
        error_of(replace_line(kGood, 9, "    batch_per_gpu: 128\n    allreduce: {bucketing: ddp}"))
            .find("only points with strategy \"allreduce\" give it") != std::string::npos);
  }

  TEST_CASE("the validation sets load with their documented counts") {
    // {file, points, anchors, predict}: public.yaml as FORMAT.md section 4 counts it, the
    // others as validation/README.md does.
    const struct {
      const char* file;
      std::size_t points;
      int anchors, predict;
    } sets[] = {{"public.yaml", 96, 40, 56},
                {"horovod-64gpu.yaml", 15, 3, 12},
                {"mlperf-scale.yaml", 23, 7, 16}};
    for (const auto& set : sets) {
      INFO(set.file);
      const ValidationFile f =
          load_validation_file(std::string(SCALECAST_SOURCE_DIR) + "/validation/" + set.file);
      int anchors = 0;
      int predict = 0;
      for (const ValidationPoint& p : f.points) (p.role == Role::kAnchor ? anchors : predict)++;
      CHECK(f.points.size() == set.points);
      CHECK(anchors == set.anchors);
      CHECK(predict == set.predict);
    }
    for (const ValidationPoint& p :
         load_validation_file(std::string(SCALECAST_SOURCE_DIR) + "/validation/horovod-64gpu.yaml")
             .points)
      CHECK(p.system == "uber-pascal-40gbe");
  }
}

TEST_SUITE("unit") {
  TEST_CASE("every system of the validation sets has a platform file that loads") {
    ValidationFile f =
        load_validation_file(std::string(SCALECAST_SOURCE_DIR) + "/validation/public.yaml");
    std::set<std::string> systems;
    for (const ValidationPoint& p : f.points) systems.insert(p.system);
    CHECK(systems.size() == 14);  // FORMAT.md section 4
    // The MLPerf-at-scale file's systems are among them.
    for (const ValidationPoint& p :
         load_validation_file(std::string(SCALECAST_SOURCE_DIR) + "/validation/mlperf-scale.yaml")
             .points) {
      CHECK(systems.count(p.system) == 1);
      f.points.push_back(p);
    }
    // The Horovod 64-GPU file's one system is its own.
    for (const ValidationPoint& p :
         load_validation_file(std::string(SCALECAST_SOURCE_DIR) + "/validation/horovod-64gpu.yaml")
             .points) {
      systems.insert(p.system);
      f.points.push_back(p);
    }
    CHECK(systems.size() == 15);
    // The MLPerf points at 128 to 540 nodes ask for more nodes than their platform file holds
    // today (dgx-a100-80gb: 20, dgx-h100: 127); they run once a cluster is built as large as
    // the point asks (issue 13 item 1). The list is exact: every other point fits its file.
    const std::set<std::string> larger_than_file = {"MT11-R.n128", "MT11-R.n540", "MT11-B.n128",
                                                    "MT11-B.n540", "MT20-R.n128", "MT20-R.n527",
                                                    "MT20-B.n128", "MT20-B.n512", "MT40-R.n316"};
    std::set<std::string> larger;
    for (const std::string& s : systems) {
      INFO("platform " << s);
      const scalecast::platforms::Platform platform = scalecast::platforms::load_platform(s);
      CHECK(platform.name == s);
      const auto& node = platform.node_types.at(platform.partitions.at(0).node_type);
      for (const ValidationPoint& p : f.points) {
        if (p.system != s) continue;
        INFO("point " << p.id);
        CHECK(node.gpu_count >= p.gpus_per_node());
        if (platform.total_nodes() * node.gpu_count < p.gpus) larger.insert(p.id);
      }
    }
    CHECK(larger == larger_than_file);
  }
}
