// ResNet-50 v1.5, batch 1, 224×224: every conv, both pools and the fc against the per-layer
// per-layer table (shapes, params, forward MACs per image; 1 MAC = 2 FLOP), then the
// totals and the backward pass (docs/sources.md, Conventions: backward pass).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>

#include "models/training_step.hpp"
#include "models/zoo.hpp"

using namespace scalecast::models;

namespace {

struct Row {
  int index;
  const char* name;
  const char* op;
  std::int64_t k, s, p;  // 0 where the table has "–"
  TensorShape in, out;
  std::int64_t params;
  double macs;
};

// the layer-by-layer table, transcribed row by row ([computed]; totals equal torchvision).
const Row kTable[] = {
    {1, "conv1", "conv", 7, 2, 3, {3, 224, 224}, {64, 112, 112}, 9408, 118013952},
    {2, "maxpool", "max pool", 3, 2, 1, {64, 112, 112}, {64, 56, 56}, 0, 0},
    {3, "layer1.0.conv1", "conv", 1, 1, 0, {64, 56, 56}, {64, 56, 56}, 4096, 12845056},
    {4, "layer1.0.conv2", "conv", 3, 1, 1, {64, 56, 56}, {64, 56, 56}, 36864, 115605504},
    {5, "layer1.0.conv3", "conv", 1, 1, 0, {64, 56, 56}, {256, 56, 56}, 16384, 51380224},
    {6, "layer1.0.downsample.0", "conv", 1, 1, 0, {64, 56, 56}, {256, 56, 56}, 16384, 51380224},
    {7, "layer1.1.conv1", "conv", 1, 1, 0, {256, 56, 56}, {64, 56, 56}, 16384, 51380224},
    {8, "layer1.1.conv2", "conv", 3, 1, 1, {64, 56, 56}, {64, 56, 56}, 36864, 115605504},
    {9, "layer1.1.conv3", "conv", 1, 1, 0, {64, 56, 56}, {256, 56, 56}, 16384, 51380224},
    {10, "layer1.2.conv1", "conv", 1, 1, 0, {256, 56, 56}, {64, 56, 56}, 16384, 51380224},
    {11, "layer1.2.conv2", "conv", 3, 1, 1, {64, 56, 56}, {64, 56, 56}, 36864, 115605504},
    {12, "layer1.2.conv3", "conv", 1, 1, 0, {64, 56, 56}, {256, 56, 56}, 16384, 51380224},
    {13, "layer2.0.conv1", "conv", 1, 1, 0, {256, 56, 56}, {128, 56, 56}, 32768, 102760448},
    {14, "layer2.0.conv2", "conv", 3, 2, 1, {128, 56, 56}, {128, 28, 28}, 147456, 115605504},
    {15, "layer2.0.conv3", "conv", 1, 1, 0, {128, 28, 28}, {512, 28, 28}, 65536, 51380224},
    {16, "layer2.0.downsample.0", "conv", 1, 2, 0, {256, 56, 56}, {512, 28, 28}, 131072, 102760448},
    {17, "layer2.1.conv1", "conv", 1, 1, 0, {512, 28, 28}, {128, 28, 28}, 65536, 51380224},
    {18, "layer2.1.conv2", "conv", 3, 1, 1, {128, 28, 28}, {128, 28, 28}, 147456, 115605504},
    {19, "layer2.1.conv3", "conv", 1, 1, 0, {128, 28, 28}, {512, 28, 28}, 65536, 51380224},
    {20, "layer2.2.conv1", "conv", 1, 1, 0, {512, 28, 28}, {128, 28, 28}, 65536, 51380224},
    {21, "layer2.2.conv2", "conv", 3, 1, 1, {128, 28, 28}, {128, 28, 28}, 147456, 115605504},
    {22, "layer2.2.conv3", "conv", 1, 1, 0, {128, 28, 28}, {512, 28, 28}, 65536, 51380224},
    {23, "layer2.3.conv1", "conv", 1, 1, 0, {512, 28, 28}, {128, 28, 28}, 65536, 51380224},
    {24, "layer2.3.conv2", "conv", 3, 1, 1, {128, 28, 28}, {128, 28, 28}, 147456, 115605504},
    {25, "layer2.3.conv3", "conv", 1, 1, 0, {128, 28, 28}, {512, 28, 28}, 65536, 51380224},
    {26, "layer3.0.conv1", "conv", 1, 1, 0, {512, 28, 28}, {256, 28, 28}, 131072, 102760448},
    {27, "layer3.0.conv2", "conv", 3, 2, 1, {256, 28, 28}, {256, 14, 14}, 589824, 115605504},
    {28, "layer3.0.conv3", "conv", 1, 1, 0, {256, 14, 14}, {1024, 14, 14}, 262144, 51380224},
    {29,
     "layer3.0.downsample.0",
     "conv",
     1,
     2,
     0,
     {512, 28, 28},
     {1024, 14, 14},
     524288,
     102760448},
    {30, "layer3.1.conv1", "conv", 1, 1, 0, {1024, 14, 14}, {256, 14, 14}, 262144, 51380224},
    {31, "layer3.1.conv2", "conv", 3, 1, 1, {256, 14, 14}, {256, 14, 14}, 589824, 115605504},
    {32, "layer3.1.conv3", "conv", 1, 1, 0, {256, 14, 14}, {1024, 14, 14}, 262144, 51380224},
    {33, "layer3.2.conv1", "conv", 1, 1, 0, {1024, 14, 14}, {256, 14, 14}, 262144, 51380224},
    {34, "layer3.2.conv2", "conv", 3, 1, 1, {256, 14, 14}, {256, 14, 14}, 589824, 115605504},
    {35, "layer3.2.conv3", "conv", 1, 1, 0, {256, 14, 14}, {1024, 14, 14}, 262144, 51380224},
    {36, "layer3.3.conv1", "conv", 1, 1, 0, {1024, 14, 14}, {256, 14, 14}, 262144, 51380224},
    {37, "layer3.3.conv2", "conv", 3, 1, 1, {256, 14, 14}, {256, 14, 14}, 589824, 115605504},
    {38, "layer3.3.conv3", "conv", 1, 1, 0, {256, 14, 14}, {1024, 14, 14}, 262144, 51380224},
    {39, "layer3.4.conv1", "conv", 1, 1, 0, {1024, 14, 14}, {256, 14, 14}, 262144, 51380224},
    {40, "layer3.4.conv2", "conv", 3, 1, 1, {256, 14, 14}, {256, 14, 14}, 589824, 115605504},
    {41, "layer3.4.conv3", "conv", 1, 1, 0, {256, 14, 14}, {1024, 14, 14}, 262144, 51380224},
    {42, "layer3.5.conv1", "conv", 1, 1, 0, {1024, 14, 14}, {256, 14, 14}, 262144, 51380224},
    {43, "layer3.5.conv2", "conv", 3, 1, 1, {256, 14, 14}, {256, 14, 14}, 589824, 115605504},
    {44, "layer3.5.conv3", "conv", 1, 1, 0, {256, 14, 14}, {1024, 14, 14}, 262144, 51380224},
    {45, "layer4.0.conv1", "conv", 1, 1, 0, {1024, 14, 14}, {512, 14, 14}, 524288, 102760448},
    {46, "layer4.0.conv2", "conv", 3, 2, 1, {512, 14, 14}, {512, 7, 7}, 2359296, 115605504},
    {47, "layer4.0.conv3", "conv", 1, 1, 0, {512, 7, 7}, {2048, 7, 7}, 1048576, 51380224},
    {48,
     "layer4.0.downsample.0",
     "conv",
     1,
     2,
     0,
     {1024, 14, 14},
     {2048, 7, 7},
     2097152,
     102760448},
    {49, "layer4.1.conv1", "conv", 1, 1, 0, {2048, 7, 7}, {512, 7, 7}, 1048576, 51380224},
    {50, "layer4.1.conv2", "conv", 3, 1, 1, {512, 7, 7}, {512, 7, 7}, 2359296, 115605504},
    {51, "layer4.1.conv3", "conv", 1, 1, 0, {512, 7, 7}, {2048, 7, 7}, 1048576, 51380224},
    {52, "layer4.2.conv1", "conv", 1, 1, 0, {2048, 7, 7}, {512, 7, 7}, 1048576, 51380224},
    {53, "layer4.2.conv2", "conv", 3, 1, 1, {512, 7, 7}, {512, 7, 7}, 2359296, 115605504},
    {54, "layer4.2.conv3", "conv", 1, 1, 0, {512, 7, 7}, {2048, 7, 7}, 1048576, 51380224},
    {55, "avgpool", "global avg pool", 0, 0, 0, {2048, 7, 7}, {2048, 1, 1}, 0, 0},
    {56, "fc", "linear + bias", 0, 0, 0, {2048, 1, 1}, {1000, 1, 1}, 2049000, 2048000},
};

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("ResNet-50 v1.5 per-layer shapes params and MACs equal the reference table") {
    const TrainingStep step = build_training_step(zoo_model("resnet50"), {});
    std::map<std::string, std::size_t> by_name;
    for (std::size_t i = 0; i < step.layers().size(); ++i) by_name[step.layers()[i].name] = i;
    std::map<int, const Op*> fwd_op;  // layer -> its forward op
    for (const Op& op : step.ops()) {
      if (op.pass == Pass::kForward && !fwd_op.count(op.layer)) fwd_op[op.layer] = &op;
    }
    for (const Row& r : kTable) {
      INFO(fmt::format("row {} {}", r.index, r.name));
      REQUIRE(by_name.count(r.name) == 1);
      const std::size_t li = by_name[r.name];
      const LayerSummary& l = step.layers()[li];
      MESSAGE(
          fmt::format("{:>2} {:<22} in {} / {}  out {} / {}  params {} / {}  MACs {:.0f} / {:.0f}"
                      "  (expected / actual)",
                      r.index, r.name, to_string(r.in), to_string(l.in), to_string(r.out),
                      to_string(l.out), r.params, l.params, r.macs, l.fwd_macs));
      CHECK(l.in == r.in);
      CHECK(l.out == r.out);
      CHECK(l.params == r.params);
      CHECK(l.fwd_macs == r.macs);
      const Op& op = *fwd_op.at(static_cast<int>(li));
      if (std::string(r.op) == "conv") {
        CHECK(op.op_class == OpClass::kConv);
        CHECK(op.conv.r == r.k);
        CHECK(op.conv.s == r.k);
        CHECK(op.conv.stride_h == r.s);
        CHECK(op.conv.pad_h == r.p);
        CHECK(op.conv.p == r.out.h);
        CHECK(op.conv.q == r.out.w);
        CHECK(op.conv.k == r.out.c);
        CHECK(op.conv.c == r.in.c);
      } else if (std::string(r.op) == "max pool") {
        CHECK(op.op_class == OpClass::kPooling);
        CHECK(op.conv.r == r.k);
        CHECK(op.conv.stride_h == r.s);
        CHECK(op.conv.pad_h == r.p);
      } else if (std::string(r.op) == "linear + bias") {
        CHECK(op.op_class == OpClass::kGemm);
        CHECK(op.gemm.m == r.out.c);  // cuBLAS view of y = x·Wᵀ: m = out, n = batch, k = in
        CHECK(op.gemm.n == 1);
        CHECK(op.gemm.k == r.in.c);
      }
    }
  }

  TEST_CASE("ResNet-50 has exactly the reference convs in order and the reference op counts") {
    const Model m = zoo_model("resnet50");
    std::vector<std::string> convs;
    std::map<LayerKind, int> count;
    for (const Layer& l : m.layers) {
      ++count[l.kind];
      if (l.kind == LayerKind::kConv) convs.push_back(l.name);
    }
    std::vector<std::string> expected;
    for (const Row& r : kTable) {
      if (std::string(r.op) == "conv") expected.emplace_back(r.name);
    }
    CHECK(convs == expected);
    // [torchvision]: 53 convs, 53 BN, 49 ReLU, 16 adds, 1 max pool, 1 avg pool, 1 fc.
    CHECK(count[LayerKind::kConv] == 53);
    CHECK(count[LayerKind::kBatchNorm] == 53);
    CHECK(count[LayerKind::kRelu] == 49);
    CHECK(count[LayerKind::kAdd] == 16);
    CHECK(count[LayerKind::kMaxPool] == 1);
    CHECK(count[LayerKind::kGlobalAvgPool] == 1);
    CHECK(count[LayerKind::kLinear] == 1);
    const ModelShapes s = infer_shapes(m);
    std::int64_t bn = 0;
    for (std::size_t i = 0; i < m.layers.size(); ++i) {
      if (m.layers[i].kind == LayerKind::kBatchNorm) bn += s.params[i];
    }
    MESSAGE("BN params expected 53120 actual ", bn);
    CHECK(bn == 53'120);
  }

  TEST_CASE("ResNet-50 totals: forward MACs per image and the table sums") {
    const TrainingStep step = build_training_step(zoo_model("resnet50"), {});
    double macs = 0;
    std::int64_t params = 0;
    for (const Row& r : kTable) macs += r.macs, params += r.params;
    MESSAGE(
        fmt::format("table sum MACs {:.0f}; model forward MACs expected 4089184256 actual {:.0f}"
                    " (FLOPs = 2 x MACs = {:.0f})",
                    macs, step.totals().forward_macs, 2 * step.totals().forward_macs));
    CHECK(macs == 4'089'184'256.0);
    CHECK(step.totals().forward_macs == 4'089'184'256.0);
    CHECK(params + 53'120 == 25'557'032);
    CHECK(step.totals().params == 25'557'032);
  }

  TEST_CASE("ResNet-50 v1 differs from v1.5 only in the six strided conv rows") {
    const TrainingStep v15 = build_training_step(zoo_model("resnet50"), {});
    const TrainingStep v1 = build_training_step(zoo_model("resnet50_v1"), {});
    REQUIRE(v1.layers().size() == v15.layers().size());
    int changed = 0;
    for (std::size_t i = 0; i < v1.layers().size(); ++i) {
      const LayerSummary &a = v1.layers()[i], &b = v15.layers()[i];
      if (a.kind != LayerKind::kConv) continue;  // BN/ReLU between them follow the conv shapes
      if (a.fwd_macs == b.fwd_macs && a.in == b.in && a.out == b.out) continue;
      ++changed;
      const bool conv1 = a.name.ends_with(".conv1");
      MESSAGE(fmt::format("{}: v1 {} -> {} MACs {:.0f} (v1.5 {} -> {})", a.name, to_string(a.in),
                          to_string(a.out), a.fwd_macs, to_string(b.in), to_string(b.out)));
      // [torchvision]; layer sum [computed]: 25,690,112 for the strided 1×1, 115,605,504 for the
      // unstrided 3×3.
      CHECK(a.fwd_macs == (conv1 ? 25'690'112.0 : 115'605'504.0));
      CHECK(a.params == b.params);
    }
    CHECK(changed == 6);
    CHECK(v15.totals().forward_macs - v1.totals().forward_macs == 3.0 * 77'070'336.0);
  }
}
