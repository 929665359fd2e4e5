// The model description format: hand-written files equal their code-built twins, every zoo
// model round-trips through to_yaml(), and malformed files fail with precise ConfigErrors.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "common/config_error.hpp"
#include "models/model_yaml.hpp"
#include "models/training_step.hpp"
#include "models/zoo.hpp"

using namespace scalecast::models;
using scalecast::common::ConfigError;

namespace {

std::string example(const char* file) {
  return std::string(SCALECAST_SOURCE_DIR) + "/models/examples/" + file;
}

// Two steps are the same work: same ops (name, class, shape, FLOPs, bytes), same dependencies,
// same gradients.
void check_same_step(const TrainingStep& a, const TrainingStep& b) {
  REQUIRE(a.ops().size() == b.ops().size());
  for (OpId i = 0; i < a.ops().size(); ++i) {
    const Op &x = a.ops()[i], &y = b.ops()[i];
    INFO(x.name, " vs ", y.name);
    CHECK(x.name == y.name);
    CHECK(x.op_class == y.op_class);
    CHECK(x.pass == y.pass);
    CHECK(x.flops == y.flops);
    CHECK(x.bytes_read == y.bytes_read);
    CHECK(x.bytes_written == y.bytes_written);
    CHECK(x.conv.p == y.conv.p);
    CHECK(x.gemm.k == y.gemm.k);
    CHECK(a.predecessors(i) == b.predecessors(i));
  }
  REQUIRE(a.gradients().size() == b.gradients().size());
  for (std::size_t i = 0; i < a.gradients().size(); ++i) {
    CHECK(a.gradients()[i].name == b.gradients()[i].name);
    CHECK(a.gradients()[i].bytes == b.gradients()[i].bytes);
  }
  CHECK(a.totals().params == b.totals().params);
  CHECK(a.totals().forward_flops == b.totals().forward_flops);
  CHECK(a.totals().backward_flops == b.totals().backward_flops);
}

std::string error_of(const std::string& yaml) {
  try {
    load_model_string(yaml, "bad.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

const char* kHead = "input: {image: [3, 32, 32]}\nlayers:\n";  // lines 1-2

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("hand-written small CNN has the hand-counted totals and equals its code twin") {
    const Model m = load_model(example("small_cnn.yaml"));
    CHECK(m.name == "small_cnn");
    StepOptions o;
    o.batch = 8;
    const TrainingStep s = build_training_step(m, o);
    // conv1 3·32·9 + bn1 64 + conv2 32·64·9 + bn2 128 + fc1 4096·256+256 + fc2 256·10+10.
    const std::int64_t params = 864 + 64 + 18'432 + 128 + 1'048'832 + 2'570;
    // conv1 864·32·32 + conv2 18432·16·16 + fc1 4096·256 + fc2 256·10, per image.
    const double macs = 884'736.0 + 4'718'592 + 1'048'576 + 2'560;
    MESSAGE(
        fmt::format("small_cnn params expected {} actual {}; MACs/image expected {:.0f} "
                    "actual {:.0f}",
                    params, s.totals().params, macs, s.totals().forward_macs / 8));
    CHECK(s.totals().params == params);
    CHECK(s.totals().forward_macs == 8 * macs);

    ModelBuilder b("small_cnn", {false, 3, 32, 32, 0}, OptimizerKind::kSgdMomentum);
    b.conv("conv1", 32, 3, 1, 1);
    b.batch_norm("bn1");
    b.relu("relu1");
    b.max_pool("pool1", 2, 2, 0);
    b.conv("conv2", 64, 3, 1, 1);
    b.batch_norm("bn2");
    b.relu("relu2");
    b.max_pool("pool2", 2, 2, 0);
    b.flatten("flatten");
    b.linear("fc1", 256);
    b.relu("relu3");
    b.dropout("drop", 0.5);
    b.linear("fc2", 10);
    b.loss("loss");
    check_same_step(s, build_training_step(std::move(b).build(), o));
  }

  TEST_CASE("hand-written ResNet blocks equal the zoo ResNet-50 layer for layer") {
    const TrainingStep y = build_training_step(load_model(example("resnet_blocks.yaml")), {});
    const TrainingStep z = build_training_step(zoo_model("resnet50"), {});
    std::map<std::string, const LayerSummary*> zoo;
    for (const auto& l : z.layers()) zoo[l.name] = &l;
    int shared = 0;
    for (const auto& l : y.layers()) {
      // The head pools 256×56×56, not 2048×7×7.
      if (l.name == "avgpool" || l.name == "flatten" || l.name == "fc" || l.name == "loss")
        continue;
      INFO(l.name);
      REQUIRE(zoo.count(l.name) == 1);
      const LayerSummary& r = *zoo[l.name];
      CHECK(l.in == r.in);
      CHECK(l.out == r.out);
      CHECK(l.params == r.params);
      CHECK(l.fwd_macs == r.fwd_macs);
      CHECK(l.fwd_flops == r.fwd_flops);
      ++shared;
    }
    MESSAGE(shared, " layers equal to the zoo's resnet50");
    CHECK(shared == 37);  // input, stem (4), block 0 (12), blocks 1-2 (10 each)
    // And the same network written with the zoo's own Bottleneck helper gives the same step.
    ModelBuilder b("resnet_blocks", {false, 3, 224, 224, 0}, OptimizerKind::kSgdMomentum);
    b.conv("conv1", 64, 7, 2, 3);
    b.batch_norm("bn1");
    b.relu("relu");
    int x = b.max_pool("maxpool", 3, 2, 1);
    for (int i = 0; i < 3; ++i) {
      x = add_bottleneck(b, fmt::format("layer1.{}.", i), x, 64, 1, i == 0, false);
    }
    b.global_avg_pool("avgpool");
    b.flatten("flatten");
    b.linear("fc", 1000);
    b.loss("loss");
    check_same_step(y, build_training_step(std::move(b).build(), {}));
    // Stage subtotals from [torchvision]; layer sum [computed]: conv1 9,408 + layer1 212,992 conv
    // params.
    std::int64_t conv_params = 0;
    for (const auto& l : y.layers()) conv_params += l.kind == LayerKind::kConv ? l.params : 0;
    CHECK(conv_params == 9'408 + 212'992);
  }

  TEST_CASE("hand-written tiny GPT has the GPT-2 parameter formula") {
    const TrainingStep s = build_training_step(load_model(example("tiny_gpt.yaml")), {});
    // V·d + 512·d + L·(12d² + 13d) + 2d with d 256, L 2, V 8000 ([BERT-config], [GPT-2-hparams]
    // [computed]).
    const std::int64_t d = 256;
    const std::int64_t expected = 8000 * d + 512 * d + 2 * (12 * d * d + 13 * d) + 2 * d;
    MESSAGE("tiny_gpt params expected ", expected, " actual ", s.totals().params);
    CHECK(s.totals().params == expected);
    CHECK(s.seq_len() == 512);
    CHECK(s.optimizer() == OptimizerKind::kAdam);
    CHECK(s.totals().backward_macs == 2 * s.totals().forward_macs);
  }

  TEST_CASE("every zoo model round-trips through its YAML description") {
    for (const auto& name : zoo_names()) {
      const Model m = zoo_model(name);
      const std::string text = to_yaml(m);
      const Model back = load_model_string(text, name + ".yaml");
      INFO(name);
      CHECK(back.name == m.name);
      CHECK(back.layers.size() == m.layers.size());
      CHECK(to_yaml(back) == text);
      if (name.starts_with("gpt2_") && name != "gpt2_small") continue;  // same code path, slower
      check_same_step(build_training_step(m, {}), build_training_step(back, {}));
    }
  }

  TEST_CASE("malformed model files give precise errors") {
    CHECK(error_of(std::string(kHead) + "  - {type: conv2d, out_channels: 8, kernel: 3}\n") ==
          "bad.yaml:3:12: error: layers[0].type: unknown layer type 'conv2d' (did you mean "
          "'conv'?)");
    CHECK(error_of(std::string(kHead) + "  - {type: conv, kernel: 3}\n") ==
          "bad.yaml:3:5: error: layers[0]: missing required key 'out_channels'");
    CHECK(error_of(std::string(kHead) + "  - {type: conv, out_channels: 8, kernal: 3}\n") ==
          "bad.yaml:3:35: error: layers[0].kernal: unknown key (did you mean 'kernel'?)");
    CHECK(error_of(std::string(kHead) + "  - {type: conv, out_channels: 0, kernel: 3}\n") ==
          "bad.yaml:3:32: error: layers[0].out_channels: expected at least 1 (a whole number "
          "from 1 to 1,000,000), got 0");
    CHECK(
        error_of(std::string(kHead) + "  - {type: conv, out_channels: 4294967297, kernel: 3}\n") ==
        "bad.yaml:3:32: error: layers[0].out_channels: expected at most 1,000,000 (a whole "
        "number from 1 to 1,000,000), got 4294967297");
    CHECK(error_of(std::string(kHead) + "  - {type: conv, out_channels: 8, kernel: [1, 2, 3]}\n") ==
          "bad.yaml:3:43: error: layers[0].kernel: expected an integer or a [height, width] pair");
    CHECK(error_of(std::string(kHead) + "  - {name: a, type: relu}\n"
                                        "  - {name: b, type: add, inputs: [a, bb]}\n") ==
          "bad.yaml:4:38: error: layers[1].inputs[1]: unknown layer 'bb' (did you mean 'a'?)");
    CHECK(error_of(std::string(kHead) + "  - {name: a, type: conv, out_channels: 8, kernel: 3}\n"
                                        "  - {name: b, type: add, inputs: [a, input]}\n") ==
          "bad.yaml:4:5: error: layers[1]: add needs equal shapes, got 8×30×30 and 3×32×32 "
          "(from 'input')");
    CHECK(error_of(std::string(kHead) + "  - {type: conv, out_channels: 8, kernel: 33}\n") ==
          "bad.yaml:3:5: error: layers[0]: kernel 33×33 does not fit the input 32×32 padded by "
          "0×0");
    CHECK(error_of(std::string(kHead) + "  - {name: a, type: relu}\n"
                                        "  - {name: a, type: relu}\n") ==
          "bad.yaml:4:12: error: layers[1].name: duplicate layer name 'a'");
    CHECK(error_of("input: {image: [3, 32, 32], tokens: 5}\nlayers: []\n") ==
          "bad.yaml:1:8: error: input: expected exactly one of 'image: [C, H, W]' or 'tokens: "
          "SEQUENCE_LENGTH'");
    CHECK(error_of(std::string(kHead)) ==
          "bad.yaml:2:1: error: layers: expected a non-empty list of layers");
    // Counts that wrapped in 64 bits at a batch of a million (negative MACs, 1e19 elements priced
    // at 8 us) are refused: a tensor or a layer of more than 2^40.
    CHECK(error_of("input: {image: [1000000, 1000000, 10]}\nlayers:\n  - {type: relu}\n") ==
          "bad.yaml: error: layer 'input': its output of 1000000×1000000×10 (1e+13 elements per "
          "sample) is more than the 1,099,511,627,776 a tensor may hold");
    CHECK(error_of("input: {image: [1000000, 1000, 1]}\nlayers:\n  - {type: flatten}\n"
                   "  - {type: linear, out_features: 1000000}\n") ==
          "bad.yaml:4:5: error: layers[1]: its parameters are more than the 1,099,511,627,776 "
          "one layer may hold");
    CHECK(error_of("input: {tokens: 16}\nlayers:\n  - {type: linear, out_features: 4}\n") ==
          "bad.yaml:3:5: error: layers[0]: token ids can only feed an embedding layer");
    CHECK(error_of("input: {tokens: 16}\nlayers:\n"
                   "  - {name: e, type: embedding, rows: 10, dim: 4}\n"
                   "  - {type: relu}\n"
                   "  - {type: linear, tied_to: relu.1}\n") ==
          "bad.yaml:5:29: error: layers[2].tied_to: 'relu.1' is not an earlier embedding layer");
    CHECK(error_of("input: {image: [3, 32, 32]}\nlayer:\n  - {type: relu}\n") ==
          "bad.yaml:2:1: error: layer: unknown key (did you mean 'layers'?)");
    CHECK(error_of("input: {image: [3, 32, 32]}\nlayers: [{type: relu}\n") ==
          "bad.yaml:3:1: error: YAML syntax error: end of sequence flow not found");
  }

  TEST_CASE("load_model tells zoo names from files") {
    CHECK(load_model("resnet50").name == "resnet50");
    CHECK_THROWS_WITH_AS(
        load_model("models/examples/missing.yaml"),
        "models/examples/missing.yaml: error: cannot open file: No such file or directory",
        ConfigError);
    CHECK_THROWS_AS(load_model("resnet-50"), std::invalid_argument);
  }
}
