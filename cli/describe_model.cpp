// `scalecast describe model NAME|FILE`: the per-layer table of one training step (shapes,
// parameters, forward MACs, forward and backward FLOPs) and its totals, or with --yaml the model
// in the description format (models/README.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "cli/commands.hpp"
#include "cli/describe.hpp"
#include "common/config_error.hpp"
#include "common/units.hpp"
#include "models/model_yaml.hpp"
#include "models/training_step.hpp"
#include "models/transformer.hpp"
#include "models/zoo.hpp"

namespace scalecast::cli {
namespace {

// 25557032 -> "25,557,032"
std::string grouped(double value) {
  std::string digits = fmt::format("{:.0f}", std::abs(value));
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

// 8.18e9 -> "8.178 G"
std::string si(double value) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int p = 0;
  while (std::abs(value) >= 1000.0 && p < 6) value /= 1000.0, ++p;
  return p == 0 ? fmt::format("{:.0f}", value) : fmt::format("{:.3f} {}", value, prefixes[p]);
}

std::string description_of(const models::Model& m) {
  for (const auto& e : models::zoo_entries()) {
    if (e.name == m.name && m.source == "zoo") return std::string(e.description);
  }
  return "from " + m.source;
}

// An LLM-zoo transformer or a `transformer:` model file: the architecture, parameter count and
// FLOPs per token (models/README.md, "LLM models").
int describe_transformer(const models::TransformerSpec& m, const DescribeModelOptions& options) {
  if (options.batch_given || options.precision_given) {
    std::fprintf(stderr,
                 "%s: error: '%s' is a transformer, described per sequence and per token: the "
                 "option does not apply (a scenario's parallel: map sets batch and precision)\n",
                 options.batch_given ? "--batch" : "--precision", m.name.c_str());
    return kExitUsage;
  }
  if (options.yaml) {
    fmt::print("{}", models::to_yaml(m));
    return kExitOk;
  }
  // Beyond a learned position table the model has no embedding for the later positions: an
  // error at --seq-len, as for a layer-graph model (gpt3_175b took 4096 and 2^30).
  if (const std::string why = models::position_table_problem(m, options.seq_len); !why.empty()) {
    std::fprintf(stderr, "--seq-len: error: %s\n", why.c_str());
    return kExitInputError;
  }
  const std::int64_t s = options.seq_len > 0 ? options.seq_len : m.seq_len;
  const models::FlopCount f = models::transformer_flops(m, s);
  const models::FlopCount half = models::transformer_flops(m, s, true);
  const double tokens = static_cast<double>(s);
  fmt::print("model      {} (transformer; {})\n", m.name,
             m.source == "zoo" ? m.citation : "from " + m.source);
  fmt::print("shape      {}\n\n", models::describe(m));
  fmt::print("parameters                {}\n",
             grouped(static_cast<double>(models::parameter_count(m))));
  fmt::print("  per block               {}\n",
             grouped(static_cast<double>(models::layer_parameter_count(m))));
  fmt::print("  GEMM weights (N of 6N)  {}\n",
             grouped(static_cast<double>(models::gemm_parameter_count(m))));
  fmt::print("\nFLOPs at sequence {} (1 MAC = 2 FLOP)\n", s);
  fmt::print(
      "  forward per sequence    {}FLOP (blocks' GEMMs {}FLOP, attention {}FLOP, logits "
      "{}FLOP)\n",
      si(f.forward) + " ", si(static_cast<double>(m.layers) * f.layer_gemm) + " ",
      si(static_cast<double>(m.layers) * f.layer_attention) + " ", si(f.logits) + " ");
  fmt::print("  forward per token       {}FLOP\n", si(f.forward / tokens) + " ");
  fmt::print("  training per token      {}FLOP (3 x forward = 6N + 12 l h s; MFU numerator)\n",
             si(f.model_per_token()) + " ");
  fmt::print("  causal half             {}FLOP per token (attention's masked half skipped)\n",
             si(half.model_per_token()) + " ");
  fmt::print("  full recompute          {}FLOP per token (HFU: + every block's forward)\n",
             si((4.0 * f.forward - f.logits) / tokens) + " ");
  return kExitOk;
}

}  // namespace

int describe_model(const DescribeModelOptions& options) {
  if (auto spec = models::load_transformer(options.name))
    return describe_transformer(*spec, options);
  models::Model model;
  try {
    model = models::load_model(options.name);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "scalecast: error: %s\n", e.what());
    return kExitInputError;
  }
  if (options.yaml) {
    fmt::print("{}", models::to_yaml(model));
    return kExitOk;
  }
  // --seq-len is the option's fault where the model cannot take it: an image model ignored it
  // (a scenario's seq_len is an error there) and a length beyond the position table was
  // reported at "zoo:".
  const auto seq_len_error = [&](const std::string& why) {
    std::fprintf(stderr, "--seq-len: error: %s\n", why.c_str());
    return kExitInputError;
  };
  if (options.seq_len > 0 && !model.input.tokens) {
    return seq_len_error(fmt::format("{} takes {}x{}x{} images, not token sequences", model.name,
                                     model.input.c, model.input.h, model.input.w));
  }
  models::StepOptions so;
  so.batch = options.batch;
  so.precision = common::parse_precision(options.precision).value_or(common::Precision::kFp32);
  so.seq_len = options.seq_len;
  std::optional<models::TrainingStep> built;
  try {
    built.emplace(models::build_training_step(model, so));
  } catch (const common::ConfigError& e) {
    if (options.seq_len == 0) throw;
    return seq_len_error(fmt::format("{} cannot take sequence length {}: {}", model.name,
                                     options.seq_len, e.message()));
  }
  const models::TrainingStep& step = *built;
  const auto& t = step.totals();
  const double n = static_cast<double>(options.batch);

  fmt::print("model      {} ({})\n", model.name, description_of(model));
  fmt::print("input      {}\n",
             model.input.tokens
                 ? fmt::format("{} tokens per sequence", step.seq_len())
                 : fmt::format("{}×{}×{} image", model.input.c, model.input.h, model.input.w));
  fmt::print("step       batch {}, precision {}, gradients {}, optimizer {} (fused)\n\n",
             options.batch, common::to_string(so.precision),
             common::to_string(step.gradient_dtype()), models::to_string(step.optimizer()));

  std::size_t width = 5;
  for (const auto& l : step.layers()) width = std::max(width, l.name.size());
  width = std::min<std::size_t>(width, 44);
  fmt::print("{:>4}  {:<{}}  {:<21}  {:>14}  {:>14}  {:>13}  {:>16}  {:>14}  {:>14}\n", "#",
             "layer", width, "type", "input", "output", "params", "fwd MACs", "fwd FLOP",
             "bwd FLOP");
  for (std::size_t i = 1; i < step.layers().size(); ++i) {
    const auto& l = step.layers()[i];
    fmt::print("{:>4}  {:<{}}  {:<21}  {:>14}  {:>14}  {:>13}  {:>16}  {:>14}  {:>14}\n", i, l.name,
               width, models::to_string(l.kind), models::to_string(l.in), models::to_string(l.out),
               grouped(static_cast<double>(l.params)), grouped(l.fwd_macs), si(l.fwd_flops),
               si(l.bwd_flops));
  }
  const auto& grads = step.gradients();
  fmt::print("\ntotals (batch {}; 1 MAC = 2 FLOP)\n", options.batch);
  fmt::print("  parameters                {}\n", grouped(static_cast<double>(t.params)));
  fmt::print("  forward MACs (conv+GEMM)  {} ({} per sample)\n", grouped(t.forward_macs),
             grouped(t.forward_macs / n));
  fmt::print("  training MACs (fwd+bwd)   {} ({} per sample)\n",
             grouped(t.forward_macs + t.backward_macs),
             grouped((t.forward_macs + t.backward_macs) / n));
  fmt::print("  forward FLOP (all ops)    {}FLOP\n", si(t.forward_flops) + " ");
  fmt::print("  backward FLOP (all ops)   {}FLOP\n", si(t.backward_flops) + " ");
  fmt::print("  optimizer FLOP            {}FLOP\n", si(t.optimizer_flops) + " ");
  fmt::print("  gradient tensors          {} ({} bytes = {}, {})\n", grads.size(),
             grouped(t.gradient_bytes),
             common::format_quantity(t.gradient_bytes, common::Quantity::kSize),
             common::to_string(step.gradient_dtype()));
  fmt::print("  ops in the step graph     {} ({} edges)\n", t.op_count,
             boost::num_edges(step.graph()));
  return kExitOk;
}

}  // namespace scalecast::cli
