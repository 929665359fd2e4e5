// What each framework's recipe really runs, per micro-batch (models/README.md "LLM step"):
// TorchTitan's op-level and layer-level selective activation checkpointing, the data-parallel
// gradient dtype (Megatron-LM 2021 fp16, NeMo bf16, fp32 by default), FP8 operand casts, and the
// unfused attention path's softmax and dropout. Each test fails on the step before these existed.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "models/llm_step.hpp"

using namespace scalecast::models;
using scalecast::common::ConfigError;
using scalecast::common::ConfigNode;

namespace {

TransformerSpec zoo(const char* name) { return *find_transformer(name); }

struct Totals {
  double gemm = 0, attention = 0, cast_elements = 0, dropout_elements = 0;
  double recompute_gemm = 0;
  int recompute_layers = 0;
};

Totals totals(const std::vector<ChunkStep>& steps) {
  Totals t;
  std::string last_layer;
  for (const ChunkStep& st : steps) {
    for (const auto* segs : {&st.forward, &st.backward}) {
      for (const LlmSegment& seg : *segs) {
        for (const Op& op : seg.ops) {
          const bool re = op.name.find(".recompute") != std::string::npos;
          if (op.op_class == OpClass::kGemm) {
            t.gemm += op.flops;
            if (re) t.recompute_gemm += op.flops;
          }
          if (op.op_class == OpClass::kAttention) t.attention += op.flops;
          if (op.name.find("fp8_cast") != std::string::npos)
            t.cast_elements += static_cast<double>(op.elements);
          if (op.name.find("attn.dropout") != std::string::npos && op.pass == Pass::kForward)
            t.dropout_elements += static_cast<double>(op.elements);
          // Count blocks that rerun anything: their input_norm appears under .recompute.
          if (re && op.name.find("input_norm.recompute") != std::string::npos) ++t.recompute_layers;
        }
      }
    }
  }
  return t;
}

ParallelConfig fsdp(std::int64_t mb, Recompute r) {
  ParallelConfig c;
  c.dp = 64;
  c.zero_stage = 3;
  c.micro_batch = mb;
  c.global_batch = 64 * mb;
  c.recompute = r;
  return c;
}

std::string error_of(const std::string& yaml, const char* model, int gpus) {
  try {
    const ConfigNode root = ConfigNode::load_string(yaml, "s.yaml");
    parse_parallel(root.required("parallel"), zoo(model), gpus);
  } catch (const ConfigError& e) {
    MESSAGE(std::string(e.what()));
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("TorchTitan op-level selective AC reruns wk, wo and w3 (fc2 for GELU) of every block") {
    for (const char* name : {"llama3_8b", "llama2_13b", "gpt3_1p7b"}) {
      const TransformerSpec m = zoo(name);
      ParallelConfig c = fsdp(2, Recompute::kSelectiveOp);
      c.seq_len = 4096;
      const Totals op = totals(build_llm_step(m, c));
      c.recompute = Recompute::kNone;
      const Totals none = totals(build_llm_step(m, c));
      const double tokens = 2.0 * 4096;
      // Llama 3 8B: 4096 x 1024 (wk) + 4096 x 4096 (wo) + 4096 x 14336 (w3) per block.
      if (std::string(name) == "llama3_8b")
        CHECK(selective_op_recomputed_weights(m) == 4096 * 1024 + 4096 * 4096 + 4096 * 14336);
      const double expected = m.layers * 2.0 * tokens * selective_op_recomputed_weights(m);
      MESSAGE(fmt::format("{}: recomputed GEMM {:.6e}, expected {:.6e}", name, op.recompute_gemm,
                          expected));
      CHECK(op.recompute_gemm == doctest::Approx(expected).epsilon(1e-12));
      CHECK(op.gemm - none.gemm == doctest::Approx(expected).epsilon(1e-12));
      CHECK(op.attention == doctest::Approx(none.attention));  // attention outputs are saved
      CHECK(op.recompute_layers == m.layers);
      // HFU counts the same recomputed matmuls.
      const double hw = training_flops_per_token(m, c, true);
      c.recompute = Recompute::kSelectiveOp;
      CHECK((training_flops_per_token(m, c, true) - hw) * tokens ==
            doctest::Approx(expected).epsilon(1e-12));
    }
  }

  TEST_CASE(
      "TorchTitan layer selective AC: recompute_every k reruns the forward of every k-th block") {
    const TransformerSpec m = zoo("llama2_13b");  // 40 blocks
    ParallelConfig c = fsdp(2, Recompute::kFull);
    const Totals full = totals(build_llm_step(m, c));
    c.recompute_every = 2;
    const Totals half = totals(build_llm_step(m, c));
    c.recompute = Recompute::kNone;
    c.recompute_every = 1;
    const Totals none = totals(build_llm_step(m, c));
    CHECK(full.recompute_layers == 40);
    CHECK(half.recompute_layers == 20);
    CHECK(half.gemm - none.gemm == doctest::Approx((full.gemm - none.gemm) / 2).epsilon(1e-12));
    c.recompute = Recompute::kFull;
    c.recompute_every = 3;  // blocks 2, 5, ..., 38: 13 of 40
    CHECK(totals(build_llm_step(m, c)).recompute_layers == 13);
    const double hw13 = training_flops_per_token(m, c, true);
    c.recompute = Recompute::kNone;
    const FlopCount f = transformer_flops(m, m.seq_len);
    CHECK((hw13 - training_flops_per_token(m, c, true)) * m.seq_len ==
          doctest::Approx(13 * (f.layer_gemm + f.layer_attention)).epsilon(1e-12));
  }

  TEST_CASE("stage memory: recompute_every k keeps full activations for the other blocks") {
    const TransformerSpec m = zoo("llama2_13b");  // 40 blocks, sequence 4,096, vocabulary 32,000
    ParallelConfig c = fsdp(2, Recompute::kNone);
    const double none = estimate_stage_memory(m, c)[0].activations_bytes;
    c.recompute = Recompute::kSelectiveOp;  // estimated as no recomputation (an upper bound)
    CHECK(estimate_stage_memory(m, c)[0].activations_bytes == doctest::Approx(none));
    c.recompute = Recompute::kFull;
    const double full = estimate_stage_memory(m, c)[0].activations_bytes;
    c.recompute_every = 2;
    const double every2 = estimate_stage_memory(m, c)[0].activations_bytes;
    const double logits = 4.0 * 4096 * 2 * 32000;  // fp32 logits of the micro-batch
    const double none_l = (none - logits) / 40, full_l = (full - none_l - logits) / 40;
    CHECK(full_l < none_l);
    // 20 checkpointed blocks, 20 with everything, one block rebuilt during its backward.
    CHECK(every2 == doctest::Approx(20 * full_l + 20 * none_l + none_l + logits));
  }

  TEST_CASE("grad_reduce_dtype sets the bytes of the data-parallel gradient reduction") {
    const TransformerSpec m = zoo("gpt3_1p7b");
    const double p = static_cast<double>(parameter_count(m));
    for (const auto& [dtype, bytes] : {std::pair{"fp16", 2}, {"bf16", 2}, {"fp32", 4}}) {
      const ConfigNode root = ConfigNode::load_string(
          fmt::format("parallel: {{global_batch: 512, grad_reduce_dtype: {}}}\n", dtype), "s.yaml");
      const ParallelConfig c = parse_parallel(root.required("parallel"), m, 32);
      CHECK(c.grad_reduce_bytes == bytes);
      double grad = 0;
      for (const LlmComm& x : build_llm_step(m, c)[0].dp_comms)
        if (x.kind == CommKind::kAllReduce) grad += x.bytes;
      CHECK(grad == doctest::Approx(bytes * p));
    }
    // Default: fp32 main gradients.
    CHECK(ParallelConfig{}.grad_reduce_bytes == 4);
  }

  TEST_CASE(
      "recompute_every, selective_op and grad_reduce_dtype: bad values are errors at the key") {
    CHECK(error_of("parallel:\n  global_batch: 64\n  recompute: selective\n  recompute_every: 2\n",
                   "llama3_8b", 64)
              .find("s.yaml:4:20: error: parallel.recompute_every: checkpoints every k-th block of "
                    "full recomputation; expected `recompute: full`") == 0);
    CHECK(error_of("parallel:\n  global_batch: 64\n  recompute: full\n  recompute_every: 0\n",
                   "llama3_8b", 64)
              .find("s.yaml:4:20: error: parallel.recompute_every:") == 0);
    CHECK(error_of("parallel:\n  global_batch: 64\n  grad_reduce_dtype: fp8\n", "llama3_8b", 64)
              .find("s.yaml:3:22: error: parallel.grad_reduce_dtype: expected one of fp32, bf16, "
                    "fp16, got \"fp8\"") == 0);
    CHECK(error_of("parallel:\n  global_batch: 64\n  recompute: op\n", "llama3_8b", 64)
              .find("expected one of none, selective, full, selective_op, got \"op\"") !=
          std::string::npos);
    ParallelConfig c;
    c.recompute_every = 2;  // without full recomputation
    CHECK_THROWS_AS(check_parallel(c, zoo("llama3_8b"), 0), std::invalid_argument);
  }

  TEST_CASE("FP8 linears cast their input forward and their output gradient backward") {
    const TransformerSpec m = zoo("llama3_8b");
    ParallelConfig c = fsdp(1, Recompute::kNone);
    const double tokens = 8192;
    c.precision = LlmPrecision::kBf16;
    CHECK(totals(build_llm_step(m, c)).cast_elements == 0);
    c.precision = LlmPrecision::kFp8;
    const auto steps = build_llm_step(m, c);
    // Per block: forward inputs of qkv, wo, fc1 (w1|w3) and fc2; backward output gradients of
    // qkv (4096 + 2 x 1024), wo, fc1 (2 x 14336) and fc2. The output projection stays bf16.
    const double d = 4096, kv = 1024, f = 14336;
    const double fwd = d + d + d + f, bwd = (d + 2 * kv) + d + 2 * f + d;
    CHECK(totals(steps).cast_elements == doctest::Approx(32 * tokens * (fwd + bwd)));
    for (const LlmSegment& seg : steps[0].forward)
      for (const Op& op : seg.ops)
        if (op.name.find("fp8_cast") != std::string::npos) {
          CHECK(op.op_class == OpClass::kElementwise);
          // bf16 in; FP8 out, as is and transposed: 2 bytes read and 2 written per element.
          CHECK(op.bytes_read == doctest::Approx(2.0 * op.elements));
          CHECK(op.bytes_written == doctest::Approx(2.0 * op.elements));
        }
  }

  TEST_CASE("unfused attention: softmax and dropout on the S^2 scores, rerun by selective") {
    const TransformerSpec m = zoo("gpt3_22b");
    ParallelConfig c;
    c.tp = 8;
    c.micro_batch = 4;
    c.global_batch = 4;
    c.flash_attention = false;
    const double scores = 4.0 * (64 / 8) * 2048.0 * 2048.0 * m.layers;  // b x a/t x s x s x l
    c.recompute = Recompute::kNone;
    CHECK(totals(build_llm_step(m, c)).dropout_elements == doctest::Approx(scores));
    c.recompute = Recompute::kSelective;  // Korthikanti et al.: the attention core again
    CHECK(totals(build_llm_step(m, c)).dropout_elements == doctest::Approx(2 * scores));
    c.flash_attention = true;
    CHECK(totals(build_llm_step(m, c)).dropout_elements == 0);
  }
}
