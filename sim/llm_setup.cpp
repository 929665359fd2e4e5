#include "sim/llm_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "platforms/platform.hpp"

namespace scalecast::sim {

using common::ConfigNode;

LlmSetup load_llm_setup(const ConfigNode& root, const std::string& model_ref, int gpus,
                        const platforms::Platform& machine, bool memory_check) {
  LlmSetup out;
  const ConfigNode model_key = root.required("model");
  // A model file's own errors keep their own file:line.
  const std::optional<models::TransformerSpec> spec = models::load_transformer(model_ref);
  if (!spec)
    model_key.fail(
        "expected a transformer (a zoo name such as llama3_8b or gpt3_175b, or a model "
        "file with `transformer:`) for a scenario with `parallel:`, got \"" +
        model_ref + "\"");
  out.model = *spec;
  const ConfigNode parallel = root.required("parallel");
  out.parallel = models::parse_parallel(parallel, out.model, gpus);
  std::vector<models::StageMemory> memory;
  try {
    memory = models::estimate_stage_memory(out.model, out.parallel);
  } catch (const std::invalid_argument& e) {
    parallel.fail(e.what());
  }
  if (auto v = root.optional("stage_gpus")) {
    out.stage_gpus = v->as_string_list();
    if (static_cast<int>(out.stage_gpus.size()) != out.parallel.pp)
      v->fail(fmt::format("expected one GPU type per pipeline stage ({} for pp {}), got {}",
                          out.parallel.pp, out.parallel.pp, out.stage_gpus.size()));
    for (const std::string& g : out.stage_gpus) {
      bool found = false;
      for (const platforms::NodeType& t : machine.node_types) found = found || t.gpu.name == g;
      if (!found) v->fail(fmt::format("no node of {} has GPU \"{}\"", machine.name, g));
    }
  }
  // Every stage must fit each GPU it may run on: its listed type, or every node type.
  for (const platforms::NodeType& t : machine.node_types) {
    if (!memory_check) break;
    std::vector<models::StageMemory> mine;
    for (const models::StageMemory& m : memory)
      if (out.stage_gpus.empty() || out.stage_gpus[static_cast<std::size_t>(m.stage)] == t.gpu.name)
        mine.push_back(m);
    try {
      models::check_stage_memory(mine, t.gpu.memory_bytes);
    } catch (const std::invalid_argument& e) {
      parallel.fail(fmt::format("{} on the {} of {} ({} nodes): {}", out.model.name, t.gpu.name,
                                machine.name, t.name, e.what()));
    }
  }
  return out;
}

LlmSetup load_llm_for_nodes(const ConfigNode& root, const std::string& model_ref,
                            const std::vector<int>& nodes, int gpus_per_node,
                            const platforms::Platform& machine, bool memory_check,
                            const ConfigNode& nodes_key) {
  if (nodes.size() != 1)
    nodes_key.fail(
        "expected one node count for a scenario with `parallel:` (its GPUs are tp x pp "
        "x cp x dp)");
  int gpn = gpus_per_node;
  if (gpn == 0) {
    gpn = std::numeric_limits<int>::max();
    for (const platforms::Partition& p : machine.partitions)
      gpn = std::min(gpn, machine.node_types.at(static_cast<std::size_t>(p.node_type)).gpu_count);
  }
  return load_llm_setup(root, model_ref, nodes.front() * gpn, machine, memory_check);
}

}  // namespace scalecast::sim
