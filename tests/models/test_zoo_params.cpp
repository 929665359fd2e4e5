// Parameter counts, forward MACs and gradient bytes of every zoo model against [torchvision] and
// the layer-by-layer count. MACs here are conv + linear multiply-accumulates per sample
// (torchvision's "_ops"; 1 MAC = 2 FLOP), so attention/BN/pooling are not in them.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>

#include "models/training_step.hpp"
#include "models/zoo.hpp"

using namespace scalecast::models;
using scalecast::common::DType;

namespace {

struct Expected {
  const char* name;
  std::int64_t params;
  double fwd_macs;  // per sample; 0 = not checked here (transformers: test_transformers.cpp)
};

// [torchvision] (params exact; MACs [torchvision] or [computed]).
const Expected kExpected[] = {
    {"resnet50", 25'557'032, 4'089'184'256.0},
    {"resnet50_v1", 25'557'032, 3'857'973'248.0},
    {"resnet101", 44'549'160, 7'801'405'440.0},
    {"resnet101_v1", 44'549'160, 7'570'194'432.0},  // [computed] ResNet-101 v1 MACs
    {"resnet152", 60'192'808, 11'513'626'624.0},
    {"resnet152_v1", 60'192'808, 11'282'415'616.0},
    {"vgg16", 138'357'544, 15'470'264'320.0},
    {"alexnet", 61'100'840, 714'188'480.0},
    {"googlenet", 6'624'904, 1'498'376'192.0},
    {"googlenet_aux", 13'004'888, 1'506'748'416.0},
    {"inception_v3", 27'161'264, 5'718'899'296.0},
    {"inception_v3_noaux", 23'834'568, 5'713'216'096.0},
    {"bert_large", 335'141'888, 0},
    {"bert_large_pretrain", 336'226'108, 0},
    {"gpt2_small", 124'439'808, 0},
    {"gpt2_medium", 354'823'168, 0},
    {"gpt2_large", 774'030'080, 0},
    {"gpt2_xl", 1'557'611'200, 0},
};

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("every zoo model has a reference entry") {
    const auto names = zoo_names();
    CHECK(names.size() == std::size(kExpected));
    for (const auto& e : kExpected) {
      INFO("model ", e.name);
      CHECK(std::find(names.begin(), names.end(), e.name) != names.end());
    }
  }

  TEST_CASE("zoo parameter counts equal the reference exactly") {
    for (const auto& e : kExpected) {
      const Model m = zoo_model(e.name);
      const ModelShapes s = infer_shapes(m);
      MESSAGE(fmt::format("{}: params expected {} actual {}", e.name, e.params, s.total_params));
      CHECK(s.total_params == e.params);
    }
  }

  TEST_CASE("CNN forward MACs per image equal the reference exactly") {
    for (const auto& e : kExpected) {
      if (e.fwd_macs == 0) continue;
      const TrainingStep step = build_training_step(zoo_model(e.name), {});
      MESSAGE(fmt::format("{}: conv+linear MACs/image expected {:.0f} actual {:.0f}", e.name,
                          e.fwd_macs, step.totals().forward_macs));
      CHECK(step.totals().forward_macs == e.fwd_macs);
      CHECK(step.totals().forward_flops >= 2.0 * e.fwd_macs);  // FLOPs add BN/ReLU/pool/loss
    }
  }

  TEST_CASE("gradient bytes are params times 4 in fp32 and times 2 in fp16") {
    for (const auto& e : kExpected) {
      const Model m = zoo_model(e.name);
      StepOptions o;
      o.gradient_dtype = DType::kFp32;
      const double fp32 = build_training_step(m, o).totals().gradient_bytes;
      o.gradient_dtype = DType::kFp16;
      const double fp16 = build_training_step(m, o).totals().gradient_bytes;
      MESSAGE(fmt::format("{}: grad bytes fp32/fp16 expected {}/{} actual {:.0f}/{:.0f}", e.name,
                          4 * e.params, 2 * e.params, fp32, fp16));
      CHECK(fp32 == 4.0 * static_cast<double>(e.params));
      CHECK(fp16 == 2.0 * static_cast<double>(e.params));
    }
  }

  TEST_CASE("ResNet-50 gradient bytes match the reference table") {
    const Model m = zoo_model("resnet50");
    StepOptions o;  // fp32 recipe: gradients default to fp32
    const TrainingStep fp32 = build_training_step(m, o);
    o.precision = scalecast::common::Precision::kFp16Mixed;  // default gradient dtype fp16
    const TrainingStep fp16 = build_training_step(m, o);
    MESSAGE(fmt::format("ResNet-50 grad bytes fp32 expected 102228128 actual {:.0f}",
                        fp32.totals().gradient_bytes));
    MESSAGE(fmt::format("ResNet-50 grad bytes fp16 expected 51114064 actual {:.0f}",
                        fp16.totals().gradient_bytes));
    CHECK(fp32.totals().gradient_bytes == 102'228'128.0);  // [torchvision] params × 4 B (97.5 MiB)
    CHECK(fp16.totals().gradient_bytes == 51'114'064.0);
    CHECK(fp32.gradients().size() == 161);  // 53 conv weights + 53×2 BN + fc weight and bias
  }

  TEST_CASE("unknown zoo names suggest the closest") {
    CHECK_THROWS_WITH(zoo_model("resnet5O"), "unknown model 'resnet5O' (did you mean 'resnet50'?)");
  }
}
