// BERT-large (google-research/bert, HF BertModel layout) and GPT-2 (OpenAI hparams, HF GPT2
// layout) as layer graphs; attention is QKᵀ and AV batched GEMMs plus softmax ([BERT-config],
// [GPT-2-hparams] [computed]).
#include <fmt/format.h>

#include "models/zoo.hpp"

namespace scalecast::models {
namespace {

constexpr std::int64_t kBertVocab = 30522, kBertPositions = 512, kBertTypes = 2;  // [BERT-config]
constexpr std::int64_t kBertWidth = 1024, kBertLayers = 24, kBertHeads = 16, kBertFfn = 4096;
constexpr std::int64_t kGptVocab = 50257, kGptContext = 1024;  // [GPT-2-hparams]
constexpr double kDropout = 0.1;  // hidden and attention dropout of both

}  // namespace

Model make_bert_large(bool heads) {
  // Default sequence length 128 (pre-training phase 1); --seq-len up to 512 (position table).
  ModelBuilder b(heads ? "bert_large_pretrain" : "bert_large", {true, 1, 1, 1, 128},
                 OptimizerKind::kAdam);
  const int word = b.embedding("embeddings.word_embeddings", kBertVocab, kBertWidth);
  const int pos = b.embedding("embeddings.position_embeddings", kBertPositions, kBertWidth, true);
  const int type = b.embedding("embeddings.token_type_embeddings", kBertTypes, kBertWidth);
  b.add("embeddings.add", {word, pos, type});
  b.layer_norm("embeddings.LayerNorm");
  int x = b.dropout("embeddings.dropout", kDropout);
  for (std::int64_t i = 0; i < kBertLayers; ++i) {  // post-LN encoder layers
    const std::string p = fmt::format("encoder.layer.{}.", i);
    const int q = b.linear(p + "attention.self.query", kBertWidth, true, x);
    const int k = b.linear(p + "attention.self.key", kBertWidth, true, x);
    const int v = b.linear(p + "attention.self.value", kBertWidth, true, x);
    b.attention(p + "attention.self", kBertHeads, false, kDropout, {q, k, v});
    b.linear(p + "attention.output.dense", kBertWidth);
    const int a = b.dropout(p + "attention.output.dropout", kDropout);
    b.add(p + "attention.output.add", {a, x});
    const int h = b.layer_norm(p + "attention.output.LayerNorm");
    b.linear(p + "intermediate.dense", kBertFfn);
    b.gelu(p + "intermediate.gelu");
    b.linear(p + "output.dense", kBertWidth);
    const int o = b.dropout(p + "output.dropout", kDropout);
    b.add(p + "output.add", {o, h});
    x = b.layer_norm(p + "output.LayerNorm");
  }
  b.select_token("pooler.first_token", 0, x);
  b.linear("pooler.dense", kBertWidth);
  const int pooled = b.tanh("pooler.activation");
  if (heads) {  // BertForPreTraining: MLM over every token (decoder tied to the word table)
    b.linear("cls.predictions.transform.dense", kBertWidth, true, x);
    b.gelu("cls.predictions.transform.gelu");
    b.layer_norm("cls.predictions.transform.LayerNorm");
    b.tied_linear("cls.predictions.decoder", word, true);
    b.loss("cls.predictions.loss");
    b.linear("cls.seq_relationship", 2, true, pooled);
    b.loss("cls.seq_relationship.loss");
  }
  return std::move(b).build();
}

Model make_gpt2(std::string name, std::int64_t layers, std::int64_t d, std::int64_t heads) {
  ModelBuilder b(std::move(name), {true, 1, 1, 1, kGptContext}, OptimizerKind::kAdam);
  const int wte = b.embedding("wte", kGptVocab, d);
  const int wpe = b.embedding("wpe", kGptContext, d, true);
  b.add("embeddings.add", {wte, wpe});
  int x = b.dropout("drop", kDropout);
  for (std::int64_t i = 0; i < layers; ++i) {  // pre-LN blocks
    const std::string p = fmt::format("h.{}.", i);
    b.layer_norm(p + "ln_1", x);
    const int qkv = b.linear(p + "attn.c_attn", 3 * d);
    b.attention(p + "attn", heads, true, kDropout, {qkv});
    b.linear(p + "attn.c_proj", d);
    const int a = b.dropout(p + "attn.resid_dropout", kDropout);
    const int r = b.add(p + "attn.add", {a, x});
    b.layer_norm(p + "ln_2", r);
    b.linear(p + "mlp.c_fc", 4 * d);
    b.gelu(p + "mlp.gelu");
    b.linear(p + "mlp.c_proj", d);
    const int m = b.dropout(p + "mlp.dropout", kDropout);
    x = b.add(p + "mlp.add", {m, r});
  }
  b.layer_norm("ln_f", x);
  b.tied_linear("lm_head", wte, false);
  b.loss("loss");
  return std::move(b).build();
}

}  // namespace scalecast::models
