// build_llm_step(): the GEMM and attention FLOPs of one micro-batch, summed over every chunk and
// every TP and CP rank, equal the closed forms of models/transformer.hpp ([Narayanan-SC21] Eq. 3
// for full recomputation); the communication bytes equal Megatron's closed forms.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>
#include <set>

#include "models/llm_step.hpp"

using namespace scalecast::models;
using scalecast::common::DType;

namespace {

TransformerSpec zoo(const char* name) { return *find_transformer(name); }

struct Sums {
  double gemm = 0, attention = 0, attention_fwd = 0;
  std::map<std::string, double> comm_bytes;  // by kind/group
  int ops = 0;
};

std::string key(const LlmComm& c) {
  return fmt::format("{}/{}", static_cast<int>(c.group), static_cast<int>(c.kind));
}

Sums sum(const std::vector<ChunkStep>& steps) {
  Sums s;
  for (const ChunkStep& st : steps) {
    for (const auto* segs : {&st.forward, &st.backward}) {
      for (const LlmSegment& seg : *segs) {
        for (const Op& op : seg.ops) {
          ++s.ops;
          if (op.op_class == OpClass::kGemm) s.gemm += op.flops;
          if (op.op_class == OpClass::kAttention) {
            s.attention += op.flops;
            if (op.pass == Pass::kForward) s.attention_fwd += op.flops;
            CHECK(op.flops ==
                  doctest::Approx(2.0 * op.gemm.m * op.gemm.n * op.gemm.k * op.gemm.batch));
          }
        }
        for (const LlmComm& c : seg.comms) s.comm_bytes[key(c)] += c.bytes;
      }
    }
  }
  return s;
}

ParallelConfig config(int tp, int pp, int cp, int vs, Recompute r, bool sp, bool flash) {
  ParallelConfig c;
  c.tp = tp;
  c.pp = pp;
  c.cp = cp;
  c.dp = 2;
  c.virtual_stages = vs;
  c.schedule = vs > 1 ? PipelineSchedule::kInterleaved1F1B : PipelineSchedule::k1F1B;
  c.recompute = r;
  c.sequence_parallel = sp;
  c.flash_attention = flash;
  c.micro_batch = 2;
  c.global_batch = 64;
  return c;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("step FLOPs x TP x CP equal Narayanan Eq. 3 (unfused attention, full recompute)") {
    for (const auto& [name, tp, pp, vs] :
         {std::tuple{"gpt3_175b", 8, 8, 3}, std::tuple{"gpt3_1p7b", 1, 1, 1},
          std::tuple{"gpt3_39p1b", 8, 2, 1}}) {
      const TransformerSpec m = zoo(name);
      ParallelConfig c = config(tp, pp, 1, vs, Recompute::kFull, false, false);
      c.seq_len = 2048;
      const Sums s = sum(build_llm_step(m, c));
      const double B = static_cast<double>(c.micro_batch), sq = 2048,
                   l = static_cast<double>(m.layers), h = static_cast<double>(m.hidden),
                   V = static_cast<double>(m.vocab);
      const double eq3 = 96 * B * sq * l * h * h * (1 + sq / (6 * h) + V / (16 * l * h));
      const double ours = (s.gemm + s.attention) * tp;
      MESSAGE(fmt::format("{} tp {} pp {}: Eq. 3 {:.6e}, step {:.6e}", name, tp, pp, eq3, ours));
      CHECK(ours == doctest::Approx(eq3).epsilon(1e-12));
    }
  }

  TEST_CASE("causal FlashAttention: a query sees (S + 1) / 2 keys, one for a one-token sequence") {
    // S / 2 gave seq_len 1 no keys, and the engine refused the op (a gemm with m = 0).
    const TransformerSpec m = zoo("llama3_8b");
    for (std::int64_t s : {1, 2, 3, 4096}) {
      ParallelConfig c = config(8, 1, 1, 1, Recompute::kSelective, false, true);
      c.seq_len = s;
      for (const ChunkStep& st : build_llm_step(m, c))
        for (const LlmSegment& seg : st.forward)
          for (const Op& op : seg.ops)
            if (op.op_class == OpClass::kAttention && op.pass == Pass::kForward) {
              INFO(op.name << " at seq_len " << s);
              CHECK(op.gemm.m >= 1);
              CHECK(op.gemm.n >= 1);
              CHECK(op.gemm.k >= 1);
              CHECK(std::min(op.gemm.m, op.gemm.n) == (s + 1) / 2);  // keys, beside S queries
            }
    }
  }

  TEST_CASE("step FLOPs by recompute policy, FlashAttention, GQA, CP") {
    const TransformerSpec m = zoo("llama3_70b");
    const double b = 2, s = 8192;
    const FlopCount half = transformer_flops(m, 8192, true);
    const double fwd_gemm = b * (m.layers * half.layer_gemm + half.logits);
    const double fwd_attn = b * m.layers * half.layer_attention;
    for (int cp : {1, 2}) {
      for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
        const ParallelConfig c = config(8, 4, cp, 5, r, true, true);
        const Sums x = sum(build_llm_step(m, c));
        const double ranks = 8.0 * cp;
        // GEMMs: forward, dgrad + wgrad (2x); full recompute reruns every block's forward.
        double gemm = 3 * fwd_gemm;
        if (r == Recompute::kFull) gemm += b * m.layers * half.layer_gemm;
        // FlashAttention: forward, backward 2.5x (S recomputed inside the kernel), + forward
        // again under selective or full recomputation.
        double attn = 3.5 * fwd_attn + (r != Recompute::kNone ? fwd_attn : 0.0);
        MESSAGE(fmt::format("cp {} recompute {}: gemm {:.6e} vs {:.6e}, attention {:.6e} vs {:.6e}",
                            cp, to_string(r), x.gemm * ranks, gemm, x.attention * ranks, attn));
        CHECK(x.gemm * ranks == doctest::Approx(gemm).epsilon(1e-12));
        CHECK(x.attention * ranks == doctest::Approx(attn).epsilon(1e-12));
      }
    }
    (void)s;
  }

  TEST_CASE("TP comms: all-reduce per block half, or reduce-scatter + all-gather with SP") {
    const TransformerSpec m = zoo("gpt3_175b");
    const double b = 2, s = 2048, h = 12288, act = b * s * h * 2;  // bf16 [tokens, d]
    for (bool sp : {false, true}) {
      const ParallelConfig c = config(8, 8, 1, 1, Recompute::kNone, sp, true);
      const auto steps = build_llm_step(m, c);
      const ChunkStep& mid = steps[3];  // 12 layers, no embedding, no output
      Sums x = sum({mid});
      const std::string ar = "0/0", rs = "0/1", ag = "0/2";
      if (!sp) {
        // Forward: 2 all-reduces per layer; backward: 2 (the dgrad of QKV and FC1).
        CHECK(x.comm_bytes[ar] == doctest::Approx(12 * 4 * act));
        CHECK(x.comm_bytes.count(rs) == 0);
      } else {
        // Forward: 2 RS + 2 AG per layer; backward: 2 RS (dgrads), 2 AG of gradients before the
        // row-parallel layers and 2 AG of the inputs again for the weight gradients. AG bytes
        // are the input shard (1/t).
        CHECK(x.comm_bytes[rs] == doctest::Approx(12 * 4 * act));
        CHECK(x.comm_bytes[ag] == doctest::Approx(12 * 6 * act / 8));
        CHECK(x.comm_bytes.count(ar) == 0);
      }
      // Pipeline boundary: micro_batch x seq x hidden (/ tp with SP) x 2 bytes.
      CHECK(mid.send_forward_bytes == doctest::Approx(b * s * h * 2 / (sp ? 8 : 1)));
      CHECK(mid.send_backward_bytes == mid.send_forward_bytes);
      CHECK(steps.front().send_backward_bytes == 0);
      CHECK(steps.back().send_forward_bytes == 0);
    }
  }

  TEST_CASE("CP comms: K/V ring exchange of cp - 1 steps") {
    const TransformerSpec m = zoo("llama3_70b");
    const ParallelConfig c = config(4, 4, 2, 5, Recompute::kNone, true, true);
    const auto steps = build_llm_step(m, c);
    int rings = 0;
    for (const LlmSegment& seg : steps[1].forward) {
      for (const LlmComm& x : seg.comms) {
        if (x.group != CommGroup::kCp) continue;
        ++rings;
        CHECK(x.kind == CommKind::kSendRecv);
        CHECK(x.steps == 1);
        // K and V of 4096 local tokens x 2 sequences, 2 of the 8 KV heads (tp 4) of 128, bf16.
        CHECK(x.bytes == doctest::Approx(2.0 * 4096 * 2 * 2 * 128 * 2));
        CHECK(x.overlappable);
      }
    }
    CHECK(rings == 4);  // 80 layers / (4 x 5) chunks
  }

  TEST_CASE("DP comms per ZeRO stage (Rajbhandari et al. 2020)") {
    const TransformerSpec m = zoo("llama3_8b");
    for (int zero : {0, 1, 2, 3}) {
      ParallelConfig c = config(1, 1, 1, 1, Recompute::kNone, false, true);
      c.dp = 8;
      c.zero_stage = zero;
      const auto steps = build_llm_step(m, c);
      REQUIRE(steps.size() == 1);
      const ChunkStep& st = steps[0];
      const double p = static_cast<double>(parameter_count(m));
      CHECK(static_cast<double>(st.parameters) == p);
      double grad = 0, gather = 0, gather_per_mb = 0;
      for (const LlmComm& x : st.dp_comms) {
        CHECK(x.group == CommGroup::kDp);
        if (x.kind == CommKind::kAllGather)
          (x.per_micro_batch ? gather_per_mb : gather) += x.full_bytes;
        else
          grad += x.bytes;
        if (zero == 0) CHECK(x.kind == CommKind::kAllReduce);
        CHECK_FALSE(x.pipelined_fsdp);  // pp 1: FSDP reshards after forward
        // 4 micro-batches: ZeRO 2 and 3 reduce each one's gradients (their shard is all they
        // keep), ZeRO 0 and 1 the accumulated gradients once.
        if (x.kind != CommKind::kAllGather) CHECK(x.per_micro_batch == (zero >= 2));
        if (x.kind == CommKind::kAllGather) CHECK(x.bytes == doctest::Approx(x.full_bytes / 8));
      }
      CHECK(grad == doctest::Approx(4 * p));  // fp32 gradients, one reduction
      CHECK(gather == doctest::Approx(zero == 1 || zero == 2 ? 2 * p : 0.0));
      CHECK(gather_per_mb == doctest::Approx(zero == 3 ? 4 * p : 0.0));  // forward + backward
      REQUIRE(st.optimizer_ops.size() == 1);
      CHECK(st.optimizer_ops[0].elements == static_cast<std::int64_t>(zero >= 1 ? p / 8 : p));
    }
  }

  TEST_CASE("ZeRO 3 with pipeline parallelism: one gather and one reduction per iteration") {
    // TorchTitan under torch.distributed.pipelining: reshard_after_forward = not pp_enabled, and
    // gradient sync only after the last backward; Psi + 2 Psi (bf16 gather, fp32 reduction).
    const TransformerSpec m = zoo("llama3_8b");
    for (int vs : {1, 2}) {
      ParallelConfig c = config(1, 2, 1, vs, Recompute::kNone, false, true);
      c.dp = 8;
      c.zero_stage = 3;
      const auto steps = build_llm_step(m, c);
      REQUIRE(steps.size() == static_cast<std::size_t>(2 * vs));
      for (const ChunkStep& st : steps) {
        const double p = static_cast<double>(st.parameters);
        int gathers = 0, reductions = 0;
        for (const LlmComm& x : st.dp_comms) {
          CHECK(x.pipelined_fsdp);
          CHECK_FALSE(x.per_micro_batch);
          if (x.kind == CommKind::kAllGather) {
            ++gathers;
            CHECK(x.full_bytes == doctest::Approx(2 * p));
          } else {
            ++reductions;
            CHECK(x.kind == CommKind::kReduceScatter);
            CHECK(x.bytes == doctest::Approx(4 * p));
          }
        }
        CHECK(gathers == 1);
        CHECK(reductions == 1);
      }
    }
  }

  TEST_CASE("parameters per chunk after the TP split sum to the model") {
    const TransformerSpec m = zoo("llama31_405b");
    ParallelConfig c = config(8, 16, 1, 1, Recompute::kFull, true, true);
    c.first_stage_layers = 7;
    c.last_stage_layers = 7;
    std::int64_t sum_tp = 0;
    for (const ChunkStep& st : build_llm_step(m, c)) sum_tp += st.parameters;
    // Norms are replicated on every TP rank: 8x(everything sharded) + 7 x the replicated norms.
    const std::int64_t norms = (2 * 126 + 1) * 16384;
    CHECK(sum_tp * 8 - 7 * norms == parameter_count(m));
  }

  TEST_CASE(
      "dtypes: FP8 block GEMMs, bf16 logits, attention and elementwise, fp32 loss, and shapes") {
    const TransformerSpec m = zoo("llama3_8b");
    ParallelConfig c = config(4, 1, 1, 1, Recompute::kNone, false, true);
    c.precision = LlmPrecision::kFp8;
    const auto steps = build_llm_step(m, c);
    std::set<std::string> names;
    for (const LlmSegment& seg : steps[0].forward) {
      for (const Op& op : seg.ops) {
        CHECK_MESSAGE(names.insert(op.name).second, op.name);
        // FP8 on the blocks' linears; the output projection stays bf16 (TE, TorchTitan).
        if (op.op_class == OpClass::kGemm)
          CHECK(op.dtype == (op.name == "output.logits" ? DType::kBf16 : DType::kFp8));
        if (op.op_class == OpClass::kAttention) CHECK(op.dtype == DType::kBf16);
        if (op.pass == Pass::kLoss) CHECK(op.dtype == DType::kFp32);
        if (op.name == "layer0.attn.qkv") {
          // Column-parallel QKV with GQA: (32 + 2 x 8) / 4 heads of 128 = 1536 outputs.
          CHECK(op.gemm.m == 1536);
          CHECK(op.gemm.n == 2 * 8192);
          CHECK(op.gemm.k == 4096);
        }
        if (op.name == "layer0.mlp.fc2") CHECK(op.gemm.k == 14336 / 4);
        if (op.name == "layer0.attn.core") {
          CHECK(op.gemm.batch == 2 * 8);  // micro-batch x local heads
          CHECK(op.gemm.n == 4096);       // causal: half the keys on average
        }
      }
    }
    CHECK(names.count("output.logits") == 1);
    CHECK(names.count("embedding") == 1);
  }
}
