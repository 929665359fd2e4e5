// build_llm_step(): the ops and communication of one micro-batch on one GPU, chunk by chunk, in
// Megatron-LM's tensor-parallel layout (Shoeybi et al. 2019: QKV and FFN-in column-parallel,
// attention output and FFN-out row-parallel; Korthikanti et al. 2022: sequence parallelism), with
// context parallelism as ring attention. Formulas and choices: models/README.md, "LLM step".
#include "models/llm_step.hpp"

#include <fmt/format.h>

#include <optional>
#include <utility>

namespace scalecast::models {
namespace {

using common::DType;

// FLOPs per element of the memory-bound ops (their cost comes from bytes; see step_assembler.cpp).
constexpr double kNormFlops = 8, kNormBwdFlops = 12, kResidualFlops = 3, kActFlops = 8,
                 kActBwdFlops = 10, kRopeFlops = 6, kSoftmaxFlops = 5, kLossFlops = 5,
                 kEmbeddingFlops = 1, kAdamFlops = 16, kCastFlops = 2;
// Adam on the fp32 master copy: reads master weight, gradient, m, v (16 B); writes master, m, v
// and the bf16 working copy (14 B).
constexpr double kAdamReadBytes = 16, kAdamWriteBytes = 14;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

class ChunkBuilder {
 public:
  ChunkBuilder(const TransformerSpec& m, const ParallelConfig& c, const ChunkLayers& chunk)
      : m_(m), c_(c), chunk_(chunk) {
    const std::int64_t seq = c.seq_len > 0 ? c.seq_len : m.seq_len;
    t_ = c.tp;
    s_full_ = seq;
    s_ = seq / c.cp;
    tokens_ = c.micro_batch * s_;
    norm_tokens_ = c.sequence_parallel ? tokens_ / t_ : tokens_;
    hd_ = m.head_dim();
    hq_ = m.heads / t_;
    hkv_ = m.kv_heads / t_;
    ffn_ = m.ffn / t_;
    vocab_ = ceil_div(m.vocab, t_);
    act_ = c.precision == LlmPrecision::kFp16 ? DType::kFp16 : DType::kBf16;
    gemm_ = c.precision == LlmPrecision::kFp8 ? DType::kFp8 : act_;
    eb_ = common::dtype_bytes(act_);
    // Causal attention: FlashAttention skips the masked half, so a query sees (S + 1) / 2 keys on
    // average (S / 2 gave a one-token sequence no keys and a gemm with m = 0); unfused kernels
    // compute all of S^2.
    keys_ = c.flash_attention ? (s_full_ + 1) / 2 : s_full_;
  }

  ChunkStep build() {
    ChunkStep st;
    st.layers = chunk_;
    forward_pass();
    st.forward = std::move(done_);
    done_.clear();
    backward_pass();
    st.backward = std::move(done_);
    const double boundary = static_cast<double>(c_.micro_batch * s_ * m_.hidden) /
                            (c_.sequence_parallel ? t_ : 1) * 2.0;
    st.send_forward_bytes = chunk_.has_output ? 0.0 : boundary;
    st.send_backward_bytes = chunk_.has_embedding ? 0.0 : boundary;
    st.parameters = chunk_parameters(m_, c_, chunk_);
    dp_comms(st);
    return st;
  }

 private:
  std::string lname(std::int64_t l, std::string_view what) const {
    return fmt::format("layer{}.{}{}", l, what, suffix_);
  }

  // Linear layer `out x in` over `rows` tokens in cuBLAS column-major terms (step_assembler.cpp).
  // `dt`: the GEMM's dtype (FP8 recipes keep the output projection in bf16: Transformer Engine
  // covers the blocks' linears only; TorchTitan's Float8 leaves `output` out).
  void gemm(std::string name, Pass pass, std::int64_t layer, std::int64_t m, std::int64_t n,
            std::int64_t k, bool ta, bool tb, std::optional<DType> dt = std::nullopt) {
    Op op;
    op.name = std::move(name);
    op.op_class = OpClass::kGemm;
    op.pass = pass;
    op.layer = static_cast<int>(layer);
    op.dtype = dt.value_or(gemm_);
    op.tensor_core = true;
    op.gemm = {m, n, k, ta, tb, 1};
    op.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    const double in_b = common::dtype_bytes(op.dtype);
    op.bytes_read = in_b * static_cast<double>(m * k + k * n);
    op.bytes_written = eb_ * static_cast<double>(m * n);
    cur_.ops.push_back(std::move(op));
  }
  void linear_fwd(const std::string& name, std::int64_t layer, std::int64_t in, std::int64_t out) {
    fp8_cast(name + ".fp8_cast", pass_, layer, tokens_ * in);
    gemm(name, pass_, layer, out, tokens_, in, true, false);
  }
  void linear_dgrad(const std::string& name, std::int64_t layer, std::int64_t in,
                    std::int64_t out) {
    fp8_cast(name + ".grad.fp8_cast", Pass::kBackwardData, layer, tokens_ * out);
    gemm(name + ".dgrad", Pass::kBackwardData, layer, in, tokens_, out, false, false);
  }
  // An FP8 linear's operand cast (Transformer Engine, torchao Float8Linear): the bf16 activation
  // (forward: the input; backward: the output gradient, shared by dgrad and wgrad) is read, scaled
  // by its amax and written in FP8 twice, as is and transposed, because Hopper's FP8 GEMMs take
  // only the TN layout and the weight-gradient GEMM needs the transpose. Weight casts (once per
  // parameter, not per token) are left out. A memory-bound kernel the bf16 recipe does not run.
  void fp8_cast(std::string name, Pass pass, std::int64_t layer, std::int64_t elements) {
    if (gemm_ != DType::kFp8) return;
    mem_op(std::move(name), OpClass::kElementwise, pass, layer, elements, kCastFlops, 1, 1, act_);
  }
  void linear_wgrad(const std::string& name, std::int64_t layer, std::int64_t in,
                    std::int64_t out) {
    gemm(name + ".wgrad", Pass::kBackwardWeight, layer, in, out, tokens_, false, true);
  }

  void mem_op(std::string name, OpClass cls, Pass pass, std::int64_t layer, std::int64_t elements,
              double flops_per, double reads, double writes, DType dt) {
    Op op;
    op.name = std::move(name);
    op.op_class = cls;
    op.pass = pass;
    op.layer = static_cast<int>(layer);
    op.dtype = dt;
    op.elements = elements;
    op.flops = flops_per * static_cast<double>(elements);
    op.bytes_read = reads * static_cast<double>(elements) * common::dtype_bytes(dt);
    op.bytes_written = writes * static_cast<double>(elements) * common::dtype_bytes(dt);
    cur_.ops.push_back(std::move(op));
  }
  void elt(std::string name, OpClass cls, Pass pass, std::int64_t layer, std::int64_t elements,
           double flops_per, double reads = 1, double writes = 1) {
    mem_op(std::move(name), cls, pass, layer, elements, flops_per, reads, writes, act_);
  }

  // Fused attention over this rank's heads: m = local queries, n = keys attended on average,
  // k = 2 head_dim (QK^T and AV each 2 m n head_dim FLOPs) forward; backward 2.5x (FlashAttention's
  // five products: S recomputed, dV, dP, dQ, dK) or 2x unfused.
  void attention(std::string name, Pass pass, std::int64_t layer, std::int64_t k_factor) {
    Op op;
    op.name = std::move(name);
    op.op_class = OpClass::kAttention;
    op.pass = pass;
    op.layer = static_cast<int>(layer);
    op.dtype = act_;  // FlashAttention / cuDNN attention run in bf16 even under FP8 recipes
    op.tensor_core = true;
    op.gemm = {s_, keys_, k_factor * hd_, false, true, c_.micro_batch * hq_};
    op.flops = 2.0 * static_cast<double>(s_) * static_cast<double>(keys_) *
               static_cast<double>(k_factor * hd_) * static_cast<double>(c_.micro_batch * hq_);
    // Q, K, V in, O out (FlashAttention keeps no S^2 tensor; unfused reads/writes it in softmax).
    const double qkvo = static_cast<double>(c_.micro_batch) * static_cast<double>(s_) *
                        static_cast<double>((2 * hq_ + 2 * hkv_) * hd_) * eb_;
    op.bytes_read = qkvo * 0.75;
    op.bytes_written = qkvo * 0.25;
    cur_.ops.push_back(std::move(op));
  }

  void tp(std::string name, CommKind kind, double full, bool overlappable) {
    if (t_ == 1) return;
    LlmComm x;
    x.name = std::move(name);
    x.group = CommGroup::kTp;
    x.kind = kind;
    x.full_bytes = full;
    x.bytes = kind == CommKind::kAllGather ? full / t_ : full;
    x.overlappable = overlappable;
    cur_.comms.push_back(std::move(x));
  }
  // TP reduction of a [tokens, d] activation: all-reduce, or reduce-scatter with SP.
  void tp_reduce(const std::string& name, bool overlappable) {
    const double full = static_cast<double>(tokens_ * m_.hidden) * eb_;
    if (c_.sequence_parallel)
      tp(name + ".tp_reducescatter", CommKind::kReduceScatter, full, overlappable);
    else
      tp(name + ".tp_allreduce", CommKind::kAllReduce, full, overlappable);
  }
  void tp_gather(const std::string& name, bool overlappable) {
    if (!c_.sequence_parallel) return;
    tp(name + ".tp_allgather", CommKind::kAllGather, static_cast<double>(tokens_ * m_.hidden) * eb_,
       overlappable);
  }
  void cp_ring(std::int64_t l, std::string_view what, double factor) {
    if (c_.cp == 1) return;
    LlmComm x;
    x.name = lname(l, what);
    x.group = CommGroup::kCp;
    x.kind = CommKind::kSendRecv;
    // K and V of this rank's tokens (its KV heads), passed cp - 1 times around the ring.
    x.bytes = factor * static_cast<double>(c_.micro_batch * s_ * 2 * hkv_ * hd_) * eb_;
    x.full_bytes = x.bytes;
    x.steps = c_.cp - 1;
    x.overlappable = true;  // ring attention overlaps each exchange with the previous block
    cur_.comms.push_back(std::move(x));
  }

  // Ends the current segment (its ops, then its comms); empty segments are dropped.
  void cut() {
    if (!cur_.ops.empty() || !cur_.comms.empty()) done_.push_back(std::move(cur_));
    cur_ = {};
  }
  bool tp_overlap() const { return c_.overlap_tp_comm; }
  std::int64_t qkv_out() const { return (hq_ + 2 * hkv_) * hd_; }
  std::int64_t fc1_out() const { return m_.ffn_kind == FfnKind::kSwiGlu ? 2 * ffn_ : ffn_; }
  std::int64_t d() const { return m_.hidden; }

  // Elements of this rank's attention scores (micro-batch x local heads x queries x keys).
  std::int64_t scores() const { return c_.micro_batch * hq_ * s_ * keys_; }
  // The unfused path's S^2 ops (Megatron-LM without FlashAttention): the fused scale-mask-softmax,
  // then dropout of the probabilities (Megatron's --attention-dropout, 0.1 by default in 2021 and
  // 2022: megatron/arguments.py; its mask is in Korthikanti et al.'s 5as/h activation term):
  // reads the probabilities, writes them and a one-byte mask (1.5 x 2 bytes); its backward reads
  // the gradient and the mask and writes the gradient. FlashAttention fuses all of it.
  void unfused_softmax_dropout(std::int64_t l, Pass pass) {
    if (c_.flash_attention) return;
    elt(lname(l, "attn.softmax"), OpClass::kSoftmax, pass, l, scores(), kSoftmaxFlops);
    elt(lname(l, "attn.dropout"), OpClass::kElementwise, pass, l, scores(), 2, 1, 1.5);
  }

  void layer_forward(std::int64_t l) {
    const std::int64_t nd = norm_tokens_ * d();
    elt(lname(l, "input_norm"), OpClass::kNormalization, pass_, l, nd, kNormFlops);
    tp_gather(lname(l, "attn"), tp_overlap());
    cut();
    linear_fwd(lname(l, "attn.qkv"), l, d(), qkv_out());
    if (m_.position == PositionKind::kRope)
      elt(lname(l, "attn.rope"), OpClass::kElementwise, pass_, l, tokens_ * (hq_ + hkv_) * hd_,
          kRopeFlops);
    cp_ring(l, "attn.cp_kv", 1.0);
    cut();
    attention(lname(l, "attn.core"), pass_, l, 2);
    unfused_softmax_dropout(l, pass_);
    linear_fwd(lname(l, "attn.proj"), l, hq_ * hd_, d());
    tp_reduce(lname(l, "attn"), tp_overlap());
    cut();
    elt(lname(l, "attn.residual"), OpClass::kElementwise, pass_, l, nd, kResidualFlops, 2, 1);
    elt(lname(l, "post_attn_norm"), OpClass::kNormalization, pass_, l, nd, kNormFlops);
    tp_gather(lname(l, "mlp"), tp_overlap());
    cut();
    linear_fwd(lname(l, "mlp.fc1"), l, d(), fc1_out());
    elt(lname(l, "mlp.act"), OpClass::kElementwise, pass_, l, tokens_ * ffn_, kActFlops,
        m_.ffn_kind == FfnKind::kSwiGlu ? 2 : 1, 1);
    linear_fwd(lname(l, "mlp.fc2"), l, ffn_, d());
    tp_reduce(lname(l, "mlp"), tp_overlap());
    cut();
    // The FFN's residual add opens the next segment (the next layer's or the chunk's end).
    elt(lname(l, "mlp.residual"), OpClass::kElementwise, pass_, l, nd, kResidualFlops, 2, 1);
  }

  // TorchTitan's op-level selective AC (parallelize_llama.py): in the recomputed forward, matmuls
  // 2, 4 and 6 of the block (wk, wo, w3 / fc2) and every op outside the save list (norms, RoPE,
  // the activation, residual adds) run again; the other matmuls and attention are saved. TP
  // collectives are saved too (reduce_scatter is on the list), so none is added here.
  void layer_recompute_op(std::int64_t l) {
    const std::int64_t nd = norm_tokens_ * d();
    elt(lname(l, "input_norm"), OpClass::kNormalization, pass_, l, nd, kNormFlops);
    linear_fwd(lname(l, "attn.k"), l, d(), hkv_ * hd_);
    if (m_.position == PositionKind::kRope)
      elt(lname(l, "attn.rope"), OpClass::kElementwise, pass_, l, tokens_ * (hq_ + hkv_) * hd_,
          kRopeFlops);
    linear_fwd(lname(l, "attn.proj"), l, hq_ * hd_, d());
    elt(lname(l, "attn.residual"), OpClass::kElementwise, pass_, l, nd, kResidualFlops, 2, 1);
    elt(lname(l, "post_attn_norm"), OpClass::kNormalization, pass_, l, nd, kNormFlops);
    if (m_.ffn_kind == FfnKind::kSwiGlu) {
      linear_fwd(lname(l, "mlp.w3"), l, d(), ffn_);
      elt(lname(l, "mlp.act"), OpClass::kElementwise, pass_, l, tokens_ * ffn_, kActFlops, 2, 1);
    } else {
      elt(lname(l, "mlp.act"), OpClass::kElementwise, pass_, l, tokens_ * ffn_, kActFlops);
      linear_fwd(lname(l, "mlp.fc2"), l, ffn_, d());
    }
  }

  void layer_backward(std::int64_t l) {
    const std::int64_t nd = norm_tokens_ * d();
    const Pass bd = Pass::kBackwardData;
    if (c_.recompute == Recompute::kFull && (l + 1) % c_.recompute_every == 0) {
      cut();
      suffix_ = ".recompute";
      pass_ = Pass::kForward;
      layer_forward(l);
      suffix_.clear();
    }
    if (c_.recompute == Recompute::kSelectiveOp) {
      cut();
      suffix_ = ".recompute";
      pass_ = Pass::kForward;
      layer_recompute_op(l);
      suffix_.clear();
    }
    elt(lname(l, "mlp.residual.bwd"), OpClass::kElementwise, bd, l, nd, 1);
    tp_gather(lname(l, "mlp.grad"), tp_overlap());
    cut();
    linear_dgrad(lname(l, "mlp.fc2"), l, ffn_, d());
    linear_wgrad(lname(l, "mlp.fc2"), l, ffn_, d());
    elt(lname(l, "mlp.act.bwd"), OpClass::kElementwise, bd, l, tokens_ * ffn_, kActBwdFlops,
        m_.ffn_kind == FfnKind::kSwiGlu ? 3 : 2, m_.ffn_kind == FfnKind::kSwiGlu ? 2 : 1);
    linear_dgrad(lname(l, "mlp.fc1"), l, d(), fc1_out());
    tp_gather(lname(l, "mlp.fc1.input"), true);  // SP: the input again, for the weight gradient
    tp_reduce(lname(l, "mlp.fc1.dgrad"), true);  // async dgrad reduction under the wgrad
    cut();
    linear_wgrad(lname(l, "mlp.fc1"), l, d(), fc1_out());
    elt(lname(l, "post_attn_norm.bwd"), OpClass::kNormalization, bd, l, nd, kNormBwdFlops, 2, 1);
    elt(lname(l, "attn.residual.bwd"), OpClass::kElementwise, bd, l, nd, 1);
    tp_gather(lname(l, "attn.grad"), tp_overlap());
    cut();
    linear_dgrad(lname(l, "attn.proj"), l, hq_ * hd_, d());
    linear_wgrad(lname(l, "attn.proj"), l, hq_ * hd_, d());
    if (c_.recompute == Recompute::kSelective) {
      // Korthikanti et al. 2022: QK^T, softmax, dropout and attention over V run again.
      suffix_ = ".recompute";
      attention(lname(l, "attn.core"), Pass::kForward, l, 2);
      unfused_softmax_dropout(l, Pass::kForward);
      suffix_.clear();
    }
    if (!c_.flash_attention) {
      elt(lname(l, "attn.dropout.bwd"), OpClass::kElementwise, bd, l, scores(), 1, 1.5, 1);
      elt(lname(l, "attn.softmax.bwd"), OpClass::kSoftmax, bd, l, scores(), 3, 2, 1);
    }
    attention(lname(l, "attn.core.bwd"), bd, l, c_.flash_attention ? 5 : 4);
    cp_ring(l, "attn.cp_kv_grad", 2.0);  // K/V forward again plus their gradients back
    cut();
    if (m_.position == PositionKind::kRope)
      elt(lname(l, "attn.rope.bwd"), OpClass::kElementwise, bd, l, tokens_ * (hq_ + hkv_) * hd_,
          kRopeFlops);
    linear_dgrad(lname(l, "attn.qkv"), l, d(), qkv_out());
    tp_gather(lname(l, "attn.qkv.input"), true);
    tp_reduce(lname(l, "attn.qkv.dgrad"), true);
    cut();
    linear_wgrad(lname(l, "attn.qkv"), l, d(), qkv_out());
    elt(lname(l, "input_norm.bwd"), OpClass::kNormalization, bd, l, nd, kNormBwdFlops, 2, 1);
  }

  void forward_pass() {
    pass_ = Pass::kForward;
    const std::int64_t nd = norm_tokens_ * d();
    if (chunk_.has_embedding) {
      // Vocabulary-parallel lookup: each TP rank fills the rows it holds, then a TP reduction.
      elt("embedding", OpClass::kEmbedding, pass_, -1, tokens_ * d(), kEmbeddingFlops, 0, 1);
      if (m_.position == PositionKind::kLearned)
        elt("embedding.position", OpClass::kElementwise, pass_, -1, tokens_ * d(), 1, 2, 1);
      tp_reduce("embedding", tp_overlap());
      cut();
    }
    for (std::int64_t l = chunk_.first_layer; l < chunk_.first_layer + chunk_.layers; ++l)
      layer_forward(l);
    if (chunk_.has_output) {
      elt("final_norm", OpClass::kNormalization, pass_, -1, nd, kNormFlops);
      tp_gather("output", tp_overlap());
      cut();
      gemm("output.logits", pass_, -1, vocab_, tokens_, d(), true, false, act_);
      // Vocabulary-parallel cross-entropy (fp32): max, sum of exponentials and target logit
      // all-reduced over TP.
      mem_op("loss", OpClass::kSoftmax, Pass::kLoss, -1, tokens_ * vocab_, kLossFlops, 1, 1,
             DType::kFp32);
      tp("loss.tp_allreduce", CommKind::kAllReduce, 3.0 * static_cast<double>(tokens_) * 4.0,
         false);
    }
    cut();
  }

  void backward_pass() {
    const std::int64_t nd = norm_tokens_ * d();
    if (chunk_.has_output) {
      mem_op("loss.grad", OpClass::kSoftmax, Pass::kLoss, -1, tokens_ * vocab_, 2, 1, 1,
             DType::kFp32);
      gemm("output.logits.dgrad", Pass::kBackwardData, -1, d(), tokens_, vocab_, false, false,
           act_);
      tp_gather("output.input", true);
      tp_reduce("output.dgrad", true);
      cut();
      gemm("output.logits.wgrad", Pass::kBackwardWeight, -1, d(), vocab_, tokens_, false, true,
           act_);
      elt("final_norm.bwd", OpClass::kNormalization, Pass::kBackwardData, -1, nd, kNormBwdFlops, 2,
          1);
    }
    for (std::int64_t l = chunk_.first_layer + chunk_.layers - 1; l >= chunk_.first_layer; --l)
      layer_backward(l);
    if (chunk_.has_embedding) {
      tp_gather("embedding.grad", tp_overlap());
      cut();
      elt("embedding.wgrad", OpClass::kEmbedding, Pass::kBackwardWeight, -1, tokens_ * d(),
          kEmbeddingFlops, 2, 1);
    }
    cut();
  }

  void dp_comms(ChunkStep& st) const {
    const int group = c_.dp * c_.cp;  // CP ranks hold the same weights: they reduce together
    const double p = static_cast<double>(st.parameters);
    const double shard = c_.zero_stage >= 1 ? p / group : p;
    Op opt;
    opt.name = fmt::format("chunk{}.optimizer", chunk_.chunk);
    opt.op_class = OpClass::kOptimizer;
    opt.pass = Pass::kOptimizer;
    opt.dtype = DType::kFp32;
    opt.elements = static_cast<std::int64_t>(shard + 0.5);
    opt.flops = kAdamFlops * shard;
    opt.bytes_read = kAdamReadBytes * shard;
    opt.bytes_written = kAdamWriteBytes * shard;
    st.optimizer_ops.push_back(std::move(opt));
    if (group == 1) return;
    const CommGroup g = c_.cp > 1 ? CommGroup::kDpCp : CommGroup::kDp;
    const auto comm = [&](std::string what, CommKind kind, double full, bool overlap, bool per_mb) {
      LlmComm x;
      x.name = fmt::format("chunk{}.{}", chunk_.chunk, what);
      x.group = g;
      x.kind = kind;
      x.full_bytes = full;
      x.bytes = kind == CommKind::kAllGather ? full / group : full;
      x.overlappable = overlap;
      x.per_micro_batch = per_mb;
      x.pipelined_fsdp = c_.pipelined_fsdp();
      st.dp_comms.push_back(std::move(x));
    };
    const double grads = p * c_.grad_reduce_bytes, params = p * kParamGatherBytes;
    if (c_.zero_stage == 0) {
      comm("grad_allreduce", CommKind::kAllReduce, grads, c_.overlap_dp_comm, false);
    } else if (c_.zero_stage <= 2) {
      // ZeRO 2 keeps only its gradient shard, so without a pipeline each micro-batch's gradients
      // are reduce-scattered after its backward (DeepSpeed: "ZeRO stage >= 2 communicates during
      // non gradient accumulation boundaries as well" [DeepSpeed-engine]); ZeRO 1 once.
      const bool per_mb = c_.zero_stage == 2 && c_.pp == 1;
      comm("grad_reducescatter", CommKind::kReduceScatter, grads, c_.overlap_dp_comm, per_mb);
      comm("param_allgather", CommKind::kAllGather, params, c_.overlap_param_gather, false);
    } else if (c_.pipelined_fsdp()) {
      // FSDP under a pipeline schedule (TorchTitan): one gather and one reduction per iteration.
      comm("param_allgather.first_forward", CommKind::kAllGather, params, c_.overlap_param_gather,
           false);
      comm("grad_reducescatter", CommKind::kReduceScatter, grads, c_.overlap_dp_comm, false);
    } else {
      comm("param_allgather.forward", CommKind::kAllGather, params, c_.overlap_param_gather, true);
      comm("param_allgather.backward", CommKind::kAllGather, params, c_.overlap_param_gather, true);
      comm("grad_reducescatter", CommKind::kReduceScatter, grads, c_.overlap_dp_comm, true);
    }
  }

  const TransformerSpec& m_;
  const ParallelConfig& c_;
  const ChunkLayers& chunk_;
  std::int64_t t_ = 1, s_full_ = 0, s_ = 0, tokens_ = 0, norm_tokens_ = 0, hd_ = 0, hq_ = 0,
               hkv_ = 0, ffn_ = 0, vocab_ = 0, keys_ = 0;
  DType act_ = DType::kBf16, gemm_ = DType::kBf16;
  double eb_ = 2;
  Pass pass_ = Pass::kForward;
  std::string suffix_;
  LlmSegment cur_;
  std::vector<LlmSegment> done_;
};

}  // namespace

std::int64_t chunk_parameters(const TransformerSpec& m, const ParallelConfig& c,
                              const ChunkLayers& chunk) {
  const std::int64_t t = c.tp, d = m.hidden, kv = m.kv_heads * m.head_dim();
  const std::int64_t norm = m.norm == NormKind::kLayerNorm ? 2 * d : d;
  const std::int64_t fc1 = m.ffn_kind == FfnKind::kSwiGlu ? 2 * m.ffn : m.ffn;
  std::int64_t layer = (2 * d * d + 2 * d * kv + fc1 * d + m.ffn * d) / t + 2 * norm;
  if (m.linear_bias) layer += (d + 2 * kv + fc1) / t + 2 * d;  // column-parallel / t; row: whole
  const std::int64_t vocab_rows = ceil_div(m.vocab, t);
  std::int64_t p = chunk.layers * layer;
  if (chunk.has_embedding) {
    p += vocab_rows * d;
    if (m.position == PositionKind::kLearned) p += m.seq_len * d;
  }
  if (chunk.has_output) {
    p += norm;
    if (!m.tied_embeddings || !chunk.has_embedding) p += vocab_rows * d;
  }
  return p;
}

std::vector<ChunkStep> build_llm_step(const TransformerSpec& model, const ParallelConfig& config) {
  std::vector<ChunkStep> steps;
  for (const ChunkLayers& chunk : chunk_layers(model, config))
    steps.push_back(ChunkBuilder(model, config, chunk).build());
  return steps;
}

}  // namespace scalecast::models
