// estimate_stage_memory() against its closed forms: ZeRO model state ([Rajbhandari-ZeRO]: 2 + 2 +
// 12 bytes per parameter, sharded by stage) and activations ([Korthikanti-MLSys23] Table 2:
// sbh(34 + 5as/h) per layer, /t with TP + SP, 34sbh/t with selective recompute, 2sbh with full)
// times the micro-batches in flight; check_stage_memory() names the stage and the excess.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "models/llm_step.hpp"
#include "models/parallel_config.hpp"

using namespace scalecast::models;

namespace {

TransformerSpec zoo(const char* name) { return *find_transformer(name); }

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("model state per ZeRO stage: 2 + 2 + 12 bytes per parameter over DP") {
    const TransformerSpec m = zoo("llama3_8b");
    const double p = static_cast<double>(parameter_count(m));
    for (int zero : {0, 1, 2, 3}) {
      ParallelConfig c;
      c.dp = 8;
      c.global_batch = 16;
      c.seq_len = 8192;
      c.zero_stage = zero;
      const auto st = estimate_stage_memory(m, c);
      REQUIRE(st.size() == 1);
      CHECK(st[0].weights_bytes == doctest::Approx(2 * p / (zero >= 3 ? 8 : 1)));
      CHECK(st[0].gradients_bytes == doctest::Approx(2 * p / (zero >= 2 ? 8 : 1)));
      CHECK(st[0].optimizer_bytes == doctest::Approx(12 * p / (zero >= 1 ? 8 : 1)));
      CHECK(st[0].workspace_bytes == kLlmWorkspaceBytes);
    }
  }

  TEST_CASE("ZeRO 3 under a pipeline keeps the gathered weights and the gradients (TorchTitan)") {
    // Gathered once per iteration and kept through every micro-batch; the gradients accumulate
    // unsharded until the last backward. Only the optimizer state stays sharded.
    const TransformerSpec m = zoo("llama3_8b");
    ParallelConfig c;
    c.pp = 4;
    c.dp = 8;
    c.global_batch = 64;
    c.seq_len = 8192;
    c.zero_stage = 3;
    const auto st = estimate_stage_memory(m, c);
    c.zero_stage = 1;
    const auto one = estimate_stage_memory(m, c);
    REQUIRE(st.size() == 4);
    for (std::size_t i = 0; i < st.size(); ++i) {
      CHECK(st[i].weights_bytes == doctest::Approx(one[i].weights_bytes));
      CHECK(st[i].gradients_bytes == doctest::Approx(one[i].gradients_bytes));
      CHECK(st[i].optimizer_bytes == doctest::Approx(one[i].optimizer_bytes));
      CHECK(st[i].weights_bytes > 0.0);
    }
  }

  TEST_CASE("activations: Korthikanti et al. Table 2 x micro-batches in flight (1F1B)") {
    // GPT-3 175B, TP 8, PP 8, micro-batch 1, seq 2048, unfused attention (the paper's setting).
    const TransformerSpec m = zoo("gpt3_175b");
    const double s = 2048, b = 1, h = 12288, a = 96, t = 8, L = 96, p = 8, V = 51200;
    const double sbh = s * b * h;
    ParallelConfig c;
    c.tp = 8;
    c.pp = 8;
    c.micro_batch = 1;
    c.global_batch = 64;
    c.seq_len = 2048;
    c.flash_attention = false;
    const double logits = 4 * s * b * V / t;  // fp32 logits on the last stage
    const auto check = [&](Recompute r, bool sp, double per_layer) {
      c.recompute = r;
      c.sequence_parallel = sp;
      const auto st = estimate_stage_memory(m, c);
      REQUIRE(st.size() == 8);
      for (int i = 0; i < 8; ++i) {
        // 1F1B: stage i holds pp - i micro-batches of its L/p layers.
        double expected = (L / p) * (p - i) * per_layer + (i == 7 ? logits : 0.0);
        if (r == Recompute::kFull) expected += sbh * (10 + 24 / t + 5 * a * s / (h * t));
        CHECK_MESSAGE(st[i].activations_bytes == doctest::Approx(expected),
                      fmt::format("{} sp {} stage {}", to_string(r), sp, i));
      }
    };
    check(Recompute::kNone, false, sbh * (10 + 24 / t + 5 * a * s / (h * t)));
    check(Recompute::kNone, true, sbh / t * (34 + 5 * a * s / h));
    check(Recompute::kSelective, true, sbh / t * 34);
    check(Recompute::kSelective, false, sbh * (10 + 24 / t));
    check(Recompute::kFull, false, 2 * sbh);
    // Stage 0, TP + SP, no recompute: L x sbh/t (34 + 5as/h) = the paper's first-stage total.
    c.recompute = Recompute::kNone;
    c.sequence_parallel = true;
    CHECK(estimate_stage_memory(m, c)[0].activations_bytes ==
          doctest::Approx(L * sbh / t * (34 + 5 * a * s / h)));
  }

  TEST_CASE("activations: GPipe holds every micro-batch, interleaved L(1 + (p-1)/(pv))") {
    const TransformerSpec m = zoo("gpt3_175b");
    ParallelConfig c;
    c.tp = 8;
    c.pp = 8;
    c.global_batch = 64;
    c.seq_len = 2048;
    c.sequence_parallel = true;
    c.recompute = Recompute::kSelective;
    const double per_layer = 2048.0 * 12288 / 8 * 34;
    c.schedule = PipelineSchedule::kGPipe;
    CHECK(estimate_stage_memory(m, c)[3].activations_bytes == doctest::Approx(12 * 64 * per_layer));
    c.schedule = PipelineSchedule::kInterleaved1F1B;
    c.virtual_stages = 3;
    // First stage: L (1 + (p - 1)/(p v)) layers' activations ([Korthikanti-MLSys23]).
    CHECK(estimate_stage_memory(m, c)[0].activations_bytes ==
          doctest::Approx(96 * (1 + 7.0 / 24) * per_layer));
  }

  TEST_CASE("a configuration that does not fit an 80 GB H100 says which stage and by how much") {
    const TransformerSpec m = zoo("llama3_70b");
    ParallelConfig c;
    c.tp = 8;
    c.pp = 1;
    c.dp = 8;
    c.global_batch = 64;
    c.seq_len = 8192;
    // 70.6B / 8 = 8.8B parameters per GPU x 16 B = 141 GB of model state: no fit.
    const auto st = estimate_stage_memory(m, c);
    const double excess = st[0].total_bytes() - 80e9;
    REQUIRE(excess > 0);
    const std::string expected = fmt::format(
        "pipeline stage 0 needs {:.1f} GB per GPU, {:.1f} GB more than the device's "
        "80.0 GB",
        st[0].total_bytes() / 1e9, excess / 1e9);
    CHECK_THROWS_WITH_AS(check_stage_memory(st, 80e9), doctest::Contains(expected.c_str()),
                         std::invalid_argument);
    // ZeRO-1 over 8 (Megatron's distributed optimizer) and full recompute fit.
    c.zero_stage = 1;
    c.recompute = Recompute::kFull;
    c.sequence_parallel = true;
    CHECK_NOTHROW(check_stage_memory(estimate_stage_memory(m, c), 80e9));
  }
}
