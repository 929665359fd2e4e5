// Spatial sizes and block widths of the other CNNs against [torchvision] (ceil-mode pooling in
// GoogLeNet, Inception-v3's stem and block outputs, AlexNet's 224 → 55 → 27 → 13 → 6), and the
// bytes an op moves.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>

#include "models/training_step.hpp"
#include "models/zoo.hpp"

using namespace scalecast::models;

namespace {

std::map<std::string, LayerSummary> rows(const char* model) {
  std::map<std::string, LayerSummary> r;
  const TrainingStep step = build_training_step(zoo_model(model), {});
  for (const auto& l : step.layers()) r[l.name] = l;
  return r;
}

void expect(const std::map<std::string, LayerSummary>& r, const std::string& name,
            TensorShape out) {
  INFO(name);
  REQUIRE(r.count(name) == 1);
  MESSAGE(
      fmt::format("{}: expected {} actual {}", name, to_string(out), to_string(r.at(name).out)));
  CHECK(r.at(name).out == out);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("GoogLeNet ceil-mode pools and inception widths") {
    const auto r = rows("googlenet");
    expect(r, "maxpool1", {64, 56, 56});
    expect(r, "maxpool2", {192, 28, 28});
    expect(r, "maxpool3", {480, 14, 14});
    expect(r, "maxpool4", {832, 7, 7});
    const std::pair<const char*, std::int64_t> widths[] = {{"3a", 256}, {"3b", 480}, {"4a", 512},
                                                           {"4b", 512}, {"4c", 512}, {"4d", 528},
                                                           {"4e", 832}, {"5a", 832}, {"5b", 1024}};
    for (const auto& [m, c] : widths) {
      const std::int64_t hw = m[0] == '3' ? 28 : m[0] == '4' ? 14 : 7;
      expect(r, fmt::format("inception{}.cat", m), {c, hw, hw});
    }
    const auto a = rows("googlenet_aux");
    expect(a, "aux1.pool", {512, 4, 4});
    expect(a, "aux2.flatten", {2048, 1, 1});
  }

  TEST_CASE("Inception-v3 stem and block outputs") {
    const auto r = rows("inception_v3");
    expect(r, "Conv2d_1a_3x3.conv", {32, 149, 149});
    expect(r, "Conv2d_2a_3x3.conv", {32, 147, 147});
    expect(r, "Conv2d_2b_3x3.conv", {64, 147, 147});
    expect(r, "maxpool1", {64, 73, 73});
    expect(r, "Conv2d_4a_3x3.conv", {192, 71, 71});
    expect(r, "maxpool2", {192, 35, 35});
    expect(r, "Mixed_5b.cat", {256, 35, 35});
    expect(r, "Mixed_5c.cat", {288, 35, 35});
    expect(r, "Mixed_5d.cat", {288, 35, 35});
    expect(r, "Mixed_6a.cat", {768, 17, 17});
    expect(r, "Mixed_6e.cat", {768, 17, 17});
    expect(r, "AuxLogits.pool", {768, 5, 5});
    expect(r, "AuxLogits.conv1.conv", {768, 1, 1});
    expect(r, "Mixed_7a.cat", {1280, 8, 8});
    expect(r, "Mixed_7b.cat", {2048, 8, 8});
    expect(r, "Mixed_7c.cat", {2048, 8, 8});
  }

  TEST_CASE("AlexNet and VGG-16 spatial sizes") {
    const auto a = rows("alexnet");
    expect(a, "features.0", {64, 55, 55});
    expect(a, "features.2", {64, 27, 27});
    expect(a, "features.5", {192, 13, 13});
    expect(a, "features.12", {256, 6, 6});
    expect(a, "flatten", {9216, 1, 1});
    const auto v = rows("vgg16");
    expect(v, "features.30", {512, 7, 7});
    expect(v, "flatten", {25088, 1, 1});
  }

  TEST_CASE("bytes moved by conv and GEMM ops") {
    StepOptions o;
    o.batch = 2;
    const TrainingStep s = build_training_step(zoo_model("resnet50"), o);
    std::map<std::string, const Op*> ops;
    for (const Op& op : s.ops()) ops[op.name] = &op;
    // layer1.0.conv2: 64×56×56 in and out, 36,864 weights, fp32.
    const double act = 2.0 * 64 * 56 * 56 * 4, w = 36'864.0 * 4;
    CHECK(ops.at("layer1.0.conv2")->bytes_read == act + w);
    CHECK(ops.at("layer1.0.conv2")->bytes_written == act);
    CHECK(ops.at("layer1.0.conv2.dgrad")->bytes_read == act + w);
    CHECK(ops.at("layer1.0.conv2.dgrad")->bytes_written == act);
    CHECK(ops.at("layer1.0.conv2.wgrad")->bytes_read == 2 * act);
    CHECK(ops.at("layer1.0.conv2.wgrad")->bytes_written == w);
    // fc: x 2×2048, W 1000×2048, y 2×1000.
    CHECK(ops.at("fc")->bytes_read == (2.0 * 2048 + 2'048'000) * 4);
    CHECK(ops.at("fc")->bytes_written == 2.0 * 1000 * 4);
    CHECK(ops.at("fc.wgrad")->gemm.k == 2);  // dW = dYᵀ·X reduces over the batch
  }
}
