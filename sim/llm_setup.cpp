#include "sim/llm_setup.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "common/precision.hpp"
#include "platforms/platform.hpp"

namespace scalecast::sim {

using common::ConfigNode;

void check_job_kind_keys(const ConfigNode& root, bool llm) {
  if (!llm) {
    if (auto v = root.optional("stage_gpus"))
      v->fail("used only with `parallel:` (one GPU type per pipeline stage of an LLM job)");
    return;
  }
  // Given elsewhere in an LLM scenario.
  const std::pair<const char*, const char*> moved[] = {
      {"seq_len", "seq_len"},
      {"precision", "precision"},
      {"batch_per_gpu", "micro_batch and global_batch"},
      {"accumulation", "micro_batch and global_batch"}};
  for (const auto& [key, instead] : moved)
    if (auto v = root.optional(key))
      v->fail(fmt::format("not used with `parallel:`; set parallel.{} instead", instead));
  // Read by the data-parallel job only (sim/pipeline_job.hpp says what the LLM job simulates).
  const std::pair<const char*, const char*> unsimulated[] = {
      {"fixed_costs",
       "host dispatch and per-iteration host costs are not simulated for an LLM job; remove "
       "the key (the anchor's framework_efficiency carries a framework's overheads)"},
      {"input",
       "the input pipeline is not simulated for an LLM job (its token batches come from "
       "memory); remove the key"},
      {"flow_limit_gpus", "an LLM job always runs at wave fidelity; remove the key"},
      {"allreduce",
       "an LLM job's collectives are NCCL rings over its process groups; set their overlap and "
       "gradient dtype with parallel.overlap and parallel.grad_reduce_dtype"},
      {"framework",
       "an LLM job states its framework's policies in parallel (overlap, grad_reduce_dtype, "
       "recompute, zero_stage, schedule)"},
      {"time_to_train",
       "time to train is computed for the convergence tables' CNN and BERT jobs only, not for "
       "an LLM job"},
      {"parameter_server", "an LLM job has no parameter servers"},
      {"trace",
       "an LLM job's trace.json always has one process per pipeline stage (run --out); remove "
       "the key"}};
  for (const auto& [key, why] : unsimulated) {
    std::optional<ConfigNode> v = root.optional(key);
    if (!v) continue;
    // At the map's first leaf: its own line in the file, or the --set that wrote it.
    while (v->is_map() && !v->entries().empty()) v = v->entries().front().second;
    v->fail(fmt::format("not used with `parallel:`: {}", why));
  }
  if (auto v = root.optional("fidelity"); v && v->as_string() == "flow")
    v->fail(
        "not used with `parallel:`: an LLM job's collectives run at wave fidelity (one flow per "
        "ring edge per call); expected wave or auto");
  if (auto v = root.optional("strategy"); v && v->as_string() != "data_parallel")
    v->fail("not used with `parallel:`: an LLM job's strategy is its parallel map; remove the key");
}

namespace {

// The job's GEMMs run on tensor cores in parallel.precision (fp8: FP8 GEMMs, the rest in bf16),
// which every GPU it may run on (its stage_gpus, or every node type's) must have a peak for: a
// GPU without one (fp8 on a V100) stopped the run inside the cost model with an internal error.
void check_precision_peaks(const ConfigNode& parallel, const LlmSetup& out,
                           const platforms::Platform& machine) {
  using common::DType;
  const models::LlmPrecision p = out.parallel.precision;
  const DType act = p == models::LlmPrecision::kFp16 ? DType::kFp16 : DType::kBf16;
  const DType gemm = p == models::LlmPrecision::kFp8 ? DType::kFp8 : act;
  std::vector<std::string> lacking;
  for (const platforms::NodeType& t : machine.node_types) {
    const std::string& g = t.gpu.name;
    if (!out.stage_gpus.empty() &&
        std::find(out.stage_gpus.begin(), out.stage_gpus.end(), g) == out.stage_gpus.end())
      continue;
    const bool has = t.gpu.peak_flops(gemm, true) > 0 && t.gpu.peak_flops(act, true) > 0;
    if (!has && std::find(lacking.begin(), lacking.end(), g) == lacking.end()) lacking.push_back(g);
  }
  if (lacking.empty()) return;
  const std::string msg = fmt::format(
      "expected a precision with a tensor-core peak on every GPU the job may run on: {} of {} {} "
      "no {} tensor-core peak{}",
      fmt::join(lacking, ", "), machine.name, lacking.size() == 1 ? "has" : "have",
      common::to_string(gemm), p == models::LlmPrecision::kFp8 ? " (use bf16 or fp16)" : "");
  if (auto v = parallel.optional("precision")) v->fail(msg + ", got \"" + v->as_string() + "\"");
  parallel.fail(msg);
}

}  // namespace

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
  check_precision_peaks(parallel, out, machine);
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

namespace {

int job_gpus_per_node(const platforms::Platform& machine, int gpus_per_node) {
  if (gpus_per_node > 0) return gpus_per_node;
  int gpn = std::numeric_limits<int>::max();
  for (const platforms::Partition& p : machine.partitions)
    gpn = std::min(gpn, machine.node_types.at(static_cast<std::size_t>(p.node_type)).gpu_count);
  return gpn;
}

}  // namespace

void check_stage_placement(const ConfigNode& root, const LlmSetup& llm,
                           const platforms::Platform& machine, int gpus_per_node) {
  if (llm.stage_gpus.empty()) return;
  // These failed in the point's process (exit 4, no place) when the runner placed the ranks.
  const models::ParallelConfig& p = llm.parallel;
  const ConfigNode parallel = root.required("parallel");
  if (p.order.back() != models::ParallelDim::kPp) {
    (parallel.has("order") ? parallel.required("order") : parallel)
        .fail(
            "stage_gpus puts each pipeline stage on its own nodes: pp must be the outermost "
            "(last) dimension of parallel.order");
  }
  const ConfigNode key = root.required("stage_gpus");
  const int gpn = job_gpus_per_node(machine, gpus_per_node);
  const long per_stage = static_cast<long>(p.tp) * p.cp * p.dp;
  if (per_stage % gpn != 0) {
    key.fail(
        fmt::format("stage_gpus puts each pipeline stage on whole nodes: tp x cp x dp = {} "
                    "GPUs per stage is not a multiple of the {} GPUs per node",
                    per_stage, gpn));
  }
  std::map<std::string, long> have;  // nodes of the machine per GPU type
  for (const platforms::Partition& part : machine.partitions)
    have[machine.node_types.at(static_cast<std::size_t>(part.node_type)).gpu.name] += part.nodes;
  std::map<std::string, long> need;
  for (const std::string& g : llm.stage_gpus) need[g] += per_stage / gpn;
  for (const auto& [gpu, nodes] : need) {
    if (have[gpu] < nodes) {
      key.fail(
          fmt::format("the stages on {} need {} nodes of it ({} GPUs a stage, {} per node), "
                      "but {} has {} (cluster.nodes and cluster.partition size the machine)",
                      gpu, nodes, per_stage, gpn, machine.name, have[gpu]));
    }
  }
}

LlmSetup load_llm_for_nodes(const ConfigNode& root, const std::string& model_ref,
                            const std::vector<int>& nodes, int gpus_per_node,
                            const platforms::Platform& machine, bool memory_check,
                            const ConfigNode& nodes_key) {
  if (nodes.size() != 1)
    nodes_key.fail(
        "expected one node count for a scenario with `parallel:` (its GPUs are tp x pp "
        "x cp x dp)");
  return load_llm_setup(root, model_ref, nodes.front() * job_gpus_per_node(machine, gpus_per_node),
                        machine, memory_check);
}

}  // namespace scalecast::sim
