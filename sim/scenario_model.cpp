#include "sim/scenario_model.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/memory_estimate.hpp"
#include "models/training_step.hpp"
#include "models/zoo.hpp"
#include "sim/scenario_keys.hpp"
#include "sim/scenario_runner.hpp"

namespace scalecast::sim {

using common::ConfigError;
using common::ConfigNode;

std::int64_t load_seq_len(const ConfigNode& n, const ConfigNode& model_key,
                          const std::string& model_name) {
  const std::int64_t v = n.as_int_in(1, kMaxCount);
  const models::Model model =
      load_named_by(model_key, [&] { return models::load_model(model_name); });
  if (!model.input.tokens) {
    n.fail("expected only for a model whose input is token sequences; " + model.name +
           " takes images");
  }
  try {
    models::infer_shapes(model, v);
  } catch (const ConfigError& e) {
    n.fail(fmt::format("{} cannot take sequence length {}: {}", model.name, v, e.message()));
  }
  return v;
}

bool load_attention(const ConfigNode& n, const ConfigNode& model_key,
                    const std::string& model_name) {
  const std::string v = n.as_string();
  if (v != "fused" && v != "unfused") n.fail("expected fused or unfused, got \"" + v + "\"");
  const models::Model model =
      load_named_by(model_key, [&] { return models::load_model(model_name); });
  const bool has_attention =
      std::any_of(model.layers.begin(), model.layers.end(),
                  [](const models::Layer& l) { return l.kind == models::LayerKind::kAttention; });
  if (!has_attention)
    n.fail("expected only for a model with attention layers; " + model.name + " has none");
  return v == "fused";
}

void check_memory(const ConfigNode& root, const Scenario& s, const platforms::Platform& machine) {
  const ConfigNode model_key = root.required("model");
  const models::Model model = load_named_by(model_key, [&] { return models::load_model(s.model); });
  const models::TrainingStep step = scenario_step(s, model);
  models::MemoryOptions mo;
  mo.input_batch_bytes =
      s.batch_per_gpu * scenario_sample_bytes(s, model, step) * (s.prefetch ? 2.0 : 1.0);
  const models::MemoryEstimate m = models::estimate_memory(model, step, mo);
  for (const platforms::NodeType& t : machine.node_types) {
    if (m.total_bytes() <= t.gpu.memory_bytes) continue;
    const auto gib = [](double b) { return fmt::format("{:.1f}", b / 1073741824.0); };
    const ConfigNode at = root.optional("batch_per_gpu").value_or(root.required("model"));
    at.fail(fmt::format(
        "{} at batch {} per GPU in {} needs {} GiB per GPU (weights {}, master weights {}, "
        "gradients {}, optimizer state {}, activations {}, input {}, workspace {} GiB), the {} "
        "({} node {}) has {} GiB: {} GiB too much; lower batch_per_gpu or the precision",
        model.name, s.batch_per_gpu, common::to_string(s.precision), gib(m.total_bytes()),
        gib(m.weights_bytes), gib(m.master_weights_bytes), gib(m.gradients_bytes),
        gib(m.optimizer_bytes), gib(m.activations_bytes), gib(m.input_bytes),
        gib(m.workspace_bytes), t.gpu.name, machine.name, t.name, gib(t.gpu.memory_bytes),
        gib(m.total_bytes() - t.gpu.memory_bytes)));
  }
}

}  // namespace scalecast::sim
