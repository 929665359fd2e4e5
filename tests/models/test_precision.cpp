// Precision recipes: which dtype and tensor-core flag each op class gets, activation bytes, the
// gradient dtype default and override (docs/sources.md Conventions: gradient bytes are a
// parameter).
#include <doctest/doctest.h>

#include "models/training_step.hpp"
#include "models/zoo.hpp"

using namespace scalecast::models;
using scalecast::common::DType;
using scalecast::common::Precision;

namespace {

const Op& op_named(const TrainingStep& s, const std::string& name) {
  for (const Op& op : s.ops()) {
    if (op.name == name) return op;
  }
  FAIL("no op ", name);
  return s.ops().front();
}

TrainingStep step(Precision p, std::optional<DType> grad = std::nullopt) {
  StepOptions o;
  o.batch = 32;
  o.precision = p;
  o.gradient_dtype = grad;
  return build_training_step(zoo_model("resnet50"), o);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("fp32 runs everything in fp32 without tensor cores") {
    const TrainingStep s = step(Precision::kFp32);
    for (const Op& op : s.ops()) {
      CHECK(op.dtype == DType::kFp32);
      CHECK(!op.tensor_core);
    }
    CHECK(s.gradient_dtype() == DType::kFp32);
  }

  TEST_CASE("tf32 puts conv and GEMM on tensor cores and keeps fp32 storage") {
    const TrainingStep s = step(Precision::kTf32);
    for (const Op& op : s.ops()) {
      const bool matrix = op.op_class == OpClass::kConv || op.op_class == OpClass::kGemm;
      INFO(op.name);
      CHECK(op.dtype == (matrix ? DType::kTf32 : DType::kFp32));
      CHECK(op.tensor_core == matrix);
    }
    CHECK(s.gradient_dtype() == DType::kFp32);
    CHECK(s.totals().gradient_bytes == 102'228'128.0);
    // Same bytes as fp32: TF32 is stored as fp32.
    CHECK(op_named(s, "layer1.0.conv2").bytes_read ==
          op_named(step(Precision::kFp32), "layer1.0.conv2").bytes_read);
  }

  TEST_CASE("fp16 mixed: fp16 activations and matrix ops on tensor cores and an fp32 optimizer") {
    const TrainingStep s = step(Precision::kFp16Mixed);
    const TrainingStep ref = step(Precision::kFp32);
    for (const Op& op : s.ops()) {
      INFO(op.name);
      const bool matrix = op.op_class == OpClass::kConv || op.op_class == OpClass::kGemm;
      CHECK(op.tensor_core == matrix);
      if (op.pass == Pass::kOptimizer || op.name.starts_with("loss")) {
        CHECK(op.dtype == DType::kFp32);  // master weights; autocast keeps the loss in fp32
      } else {
        CHECK(op.dtype == DType::kFp16);
      }
    }
    CHECK(s.gradient_dtype() == DType::kFp16);
    CHECK(s.totals().gradient_bytes == 51'114'064.0);
    const Op& a = op_named(s, "layer2.1.relu1");
    const Op& b = op_named(ref, "layer2.1.relu1");
    CHECK(a.bytes_read * 2 == b.bytes_read);  // half the activation bytes
    CHECK(a.flops == b.flops);
    // The fused optimizer still reads and writes fp32 master weights and momentum, plus the
    // fp16 gradient in and the fp16 weight copy out.
    const Op& opt = s.ops().back();
    CHECK(opt.bytes_read == doctest::Approx((4 + 2 + 4) * 25'557'032.0));
    CHECK(opt.bytes_written == doctest::Approx((4 + 4 + 2) * 25'557'032.0));
  }

  TEST_CASE("bf16 mixed mirrors fp16 with bf16") {
    const TrainingStep s = step(Precision::kBf16Mixed);
    CHECK(op_named(s, "layer3.0.conv2").dtype == DType::kBf16);
    CHECK(op_named(s, "layer3.0.conv2.wgrad").tensor_core);
    CHECK(op_named(s, "layer3.0.bn2").dtype == DType::kBf16);
    CHECK(s.gradient_dtype() == DType::kBf16);
    CHECK(s.totals().gradient_bytes == 51'114'064.0);
  }

  TEST_CASE("the gradient dtype is a parameter") {
    CHECK(step(Precision::kFp16Mixed, DType::kFp32).totals().gradient_bytes == 102'228'128.0);
    CHECK(step(Precision::kFp32, DType::kFp16).totals().gradient_bytes == 51'114'064.0);
    CHECK_THROWS_AS(step(Precision::kFp32, DType::kFp64), std::invalid_argument);
  }

  TEST_CASE("op class and pass names") {
    CHECK(to_string(OpClass::kConv) == "conv");
    CHECK(to_string(OpClass::kGemm) == "gemm");
    CHECK(to_string(OpClass::kOptimizer) == "optimizer");
    CHECK(to_string(OpClass::kMemcpy) == "memcpy");
    CHECK(to_string(Pass::kBackwardData) == "backward_data");
    CHECK(to_string(Pass::kBackwardWeight) == "backward_weight");
    CHECK(to_string(Pass::kLoss) == "loss");
  }
}
