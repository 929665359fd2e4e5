#pragma once
// A decoder-only (or encoder) transformer described by its architecture numbers, the form LLM
// training is reasoned about in (Megatron-LM, Llama): layers, hidden size, FFN size, heads and
// KV heads, vocabulary, sequence. The parallel training step (tensor/pipeline/context/data
// parallelism) is built from this description, not from the layer graph of models/model.hpp,
// because TP splits, pipeline stages and ZeRO shards are defined on these numbers.
//
// INTERFACE CONTRACT (coordinator, 3 Dec): struct fields are fixed; helpers may ADD fields and
// functions, not rename or remove these.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalecast::common {
class ConfigNode;
}

namespace scalecast::models {

enum class FfnKind { kGelu, kSwiGlu };  // GPT: 2 GEMMs d->f->d; Llama: 3 GEMMs (gate, up, down)
enum class NormKind { kLayerNorm, kRmsNorm };  // LayerNorm has a bias (beta), RMSNorm does not
enum class PositionKind { kLearned, kRope };   // learned: a seq x d table; RoPE: no parameters

struct TransformerSpec {
  std::string name;
  std::string source = "zoo";  // where it was defined (error messages)
  std::string citation;        // paper / model card the numbers come from
  std::int64_t layers = 0;
  std::int64_t hidden = 0;    // d_model
  std::int64_t ffn = 0;       // FFN inner size (4d for GPT; 14,336 for Llama 3 8B)
  std::int64_t heads = 0;     // query heads
  std::int64_t kv_heads = 0;  // = heads for MHA, fewer for GQA
  std::int64_t vocab = 0;     // as trained (padded where the framework pads)
  std::int64_t seq_len = 0;   // default training sequence length
  FfnKind ffn_kind = FfnKind::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  PositionKind position = PositionKind::kLearned;
  bool tied_embeddings = true;  // output projection shares the input embedding
  bool linear_bias = true;      // GPT-3/Megatron: biases on QKV/proj/FFN; Llama: none
  std::int64_t head_dim() const { return heads > 0 ? hidden / heads : 0; }
};

// Exact trainable parameter count (Llama 3 8B: 8,030,261,248).
std::int64_t parameter_count(const TransformerSpec& m);
// Parameters of one transformer block (attention + FFN + its norms).
std::int64_t layer_parameter_count(const TransformerSpec& m);

// Forward FLOPs of one sequence of `seq_len` tokens (multiply-add = 2 FLOPs): every GEMM of every
// layer, attention's QK^T and AV (the seq^2 terms; `causal_half` counts only the causal half as
// FlashAttention-style kernels do), and the output projection (logits). Training = 3x forward
// (model FLOPs, MFU); with full recomputation hardware FLOPs = 4x forward (HFU).
struct FlopCount {
  double forward = 0.0;            // per sequence
  double model_per_token() const;  // 3 x forward / seq_len
  // Added: the terms of `forward` (forward = layers x (layer_gemm + layer_attention) + logits).
  std::int64_t seq_len = 0;
  double layer_gemm = 0.0;       // one block's GEMMs (QKV, output projection, FFN)
  double layer_attention = 0.0;  // one block's QK^T and AV (the seq^2 terms)
  double logits = 0.0;           // the output projection onto the vocabulary
};
FlopCount transformer_flops(const TransformerSpec& m, std::int64_t seq_len,
                            bool causal_half = false);

// The zoo of transformer specs ("gpt3_175b", "llama3_8b", "llama3_70b", "llama31_405b",
// "llama2_13b", "llama2_70b", ...); nullopt when `name` is none of them.
std::optional<TransformerSpec> find_transformer(std::string_view name);
std::vector<std::string> transformer_names();
// A spec from a model YAML `transformer:` map (layers, hidden, ffn, heads, kv_heads, vocab,
// seq_len, ffn_kind, norm, position, tied_embeddings, linear_bias); file:line errors.
TransformerSpec parse_transformer(const common::ConfigNode& node);

// Added. Parameters that are GEMM weights (what 6N of the "6N + 12 l h s" rule counts): every
// block's linear weights and the output projection; not the input embedding lookup (unless tied,
// when it is the output projection), position table, norms or biases.
std::int64_t gemm_parameter_count(const TransformerSpec& m);
// One line: "32 layers, d 4096, FFN 14336 (SwiGLU), 32 heads / 8 KV heads, vocab 128256, ...".
std::string describe(const TransformerSpec& m);
// A model file holding `transformer:` (and optionally `name:`): the spec, named after the file
// unless `name` says otherwise. ConfigError at the offending key.
TransformerSpec load_transformer_string(const std::string& text, const std::string& name);
TransformerSpec load_transformer_file(const std::string& path);
// A transformer zoo name, or a model file (path with '/' or .yaml/.yml) whose root has
// `transformer:`; nullopt for anything else (a layer-graph model or an unknown name).
std::optional<TransformerSpec> load_transformer(const std::string& name_or_path);
// Added. Model FLOPs per training token as the sources define them (each checked against the
// published numbers in tests/models/test_llm_published_flops.cpp):
//   kModel:     3 x forward with full s^2 attention = 6N + 12 l d s, N = gemm_parameter_count
//               (Korthikanti et al., MegaScale, NeMo's "model TFLOP/s")
//   kCausal:    the same with attention's causal half = 6N + 6 l d s (Megatron-Bridge)
//   kAllParams: 6 x parameter_count (embedding included) + 12 l d s (TorchTitan's MFU in
//               docs/performance.md)
enum class FlopConvention { kModel, kCausal, kAllParams };
double model_flops_per_token(const TransformerSpec& m, std::int64_t seq_len, FlopConvention c);
// Added. Why `m` cannot take sequences of `seq_len` tokens: a learned position table has one row
// per position up to m.seq_len (GPT-3: 2,048, Brown et al. 2020), rotary positions have no
// table; "" when it can. The one message of parallel.seq_len, describe's --seq-len and a
// validation point's seq_len.
std::string position_table_problem(const TransformerSpec& m, std::int64_t seq_len);
// The spec as a model file that load_transformer_string() reads back into an equal spec.
std::string to_yaml(const TransformerSpec& m);

}  // namespace scalecast::models
