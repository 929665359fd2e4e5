// The per-GPU memory estimate (models/README.md "Memory estimate"): the state terms follow the
// optimizer and the precision recipe exactly; activations scale with the batch and leave out
// in-place ReLU outputs; shard divisors split what ZeRO would partition.

#include <doctest/doctest.h>

#include "models/memory_estimate.hpp"
#include "models/zoo.hpp"

using namespace scalecast::models;
using scalecast::common::Precision;

namespace {

TrainingStep step(const Model& m, std::int64_t batch, Precision p) {
  StepOptions o;
  o.batch = batch;
  o.precision = p;
  return build_training_step(m, o);
}

constexpr double kGiB = 1073741824.0;

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("fp32 SGD momentum: weights, gradients and one momentum buffer of 4 bytes each") {
    const Model m = load_model("resnet50");
    const TrainingStep s = step(m, 1, Precision::kFp32);
    const double p = static_cast<double>(s.totals().params);
    const MemoryEstimate e = estimate_memory(m, s);
    MESSAGE("resnet50 params " << p << ": weights " << e.weights_bytes << " expected " << 4 * p);
    CHECK(e.weights_bytes == 4 * p);
    CHECK(e.master_weights_bytes == 0.0);
    CHECK(e.gradients_bytes == 4 * p);
    CHECK(e.optimizer_bytes == 4 * p);
    CHECK(e.workspace_bytes == kDefaultWorkspaceBytes);
  }

  TEST_CASE("mixed precision Adam: 2-byte weights and gradients, fp32 master and two states") {
    const Model m = load_model("bert_large");
    const TrainingStep s = step(m, 1, Precision::kFp16Mixed);
    const double p = static_cast<double>(s.totals().params);
    const MemoryEstimate e = estimate_memory(m, s);
    CHECK(e.weights_bytes == 2 * p);
    CHECK(e.master_weights_bytes == 4 * p);
    CHECK(e.gradients_bytes == 2 * p);
    CHECK(e.optimizer_bytes == 8 * p);
    // 16 bytes per parameter of model state (the ZeRO paper's K = 12 plus 2 + 2).
    CHECK(e.weights_bytes + e.master_weights_bytes + e.gradients_bytes + e.optimizer_bytes ==
          16 * p);
  }

  TEST_CASE("activations scale with the batch and leave out in-place ReLU outputs") {
    const Model m = load_model("resnet50");
    const TrainingStep s1 = step(m, 1, Precision::kFp16Mixed);
    const TrainingStep s8 = step(m, 8, Precision::kFp16Mixed);
    const double a1 = estimate_memory(m, s1).activations_bytes;
    const double a8 = estimate_memory(m, s8).activations_bytes;
    MESSAGE("resnet50 fp16: " << a1 / 1048576.0 << " MiB of kept activations per image");
    CHECK(a8 == doctest::Approx(8 * a1).epsilon(1e-3));
    double all = 0.0;
    for (const Op& op : s1.ops())
      if (op.pass == Pass::kForward || op.pass == Pass::kLoss) all += op.bytes_written;
    CHECK(a1 < all);
    CHECK(a1 > 0.6 * all);
  }

  TEST_CASE("ResNet-50 AMP at batch 256 fits a 16 GB V100, GPT-2 XL fp32 at batch 32 does not") {
    const Model r = load_model("resnet50");
    const double rn = estimate_memory(r, step(r, 256, Precision::kFp16Mixed)).total_bytes();
    MESSAGE("resnet50 amp batch 256: " << rn / kGiB << " GiB (NVIDIA trains it so on 16 GB)");
    CHECK(rn < 16e9);
    const Model g = load_model("gpt2_xl");
    const double gx = estimate_memory(g, step(g, 32, Precision::kFp32)).total_bytes();
    MESSAGE("gpt2_xl fp32 batch 32: " << gx / kGiB << " GiB");
    CHECK(gx > 16e9);
    // Even its model state alone (16 bytes per parameter with Adam in fp32) exceeds 16 GB.
    const MemoryEstimate e = estimate_memory(g, step(g, 1, Precision::kFp32));
    CHECK(e.weights_bytes + e.gradients_bytes + e.optimizer_bytes > 16e9);
  }

  TEST_CASE("shard divisors split the partitioned state (ZeRO)") {
    const Model m = load_model("gpt2_small");
    const TrainingStep s = step(m, 1, Precision::kFp16Mixed);
    const MemoryEstimate full = estimate_memory(m, s);
    MemoryOptions o;
    o.optimizer_shards = o.gradient_shards = o.weight_shards = 8;
    const MemoryEstimate z = estimate_memory(m, s, o);
    CHECK(z.optimizer_bytes == full.optimizer_bytes / 8);
    CHECK(z.master_weights_bytes == full.master_weights_bytes / 8);
    CHECK(z.gradients_bytes == full.gradients_bytes / 8);
    CHECK(z.weights_bytes == full.weights_bytes / 8);
    CHECK(z.activations_bytes == full.activations_bytes);
    o.weight_shards = 0;
    CHECK_THROWS_AS(estimate_memory(m, s, o), std::invalid_argument);
  }
}
