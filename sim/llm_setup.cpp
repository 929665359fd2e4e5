#include "sim/llm_setup.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "common/precision.hpp"
#include "common/units.hpp"
#include "models/llm_step.hpp"
#include "platforms/platform.hpp"
#include "sim/rank_layout.hpp"

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
      {"accumulation", "micro_batch and global_batch"},
      {"attention", "flash_attention"}};
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

namespace {

// Segments and collective calls of one micro-batch over every chunk of `c` on `m`.
std::pair<double, double> step_counts(const models::TransformerSpec& m,
                                      const models::ParallelConfig& c) {
  double segments = 0, calls = 0;
  for (const models::ChunkStep& st : models::build_llm_step(m, c))
    for (const auto* pass : {&st.forward, &st.backward})
      for (const models::LlmSegment& seg : *pass) {
        segments += 1;
        calls += static_cast<double>(seg.comms.size());
      }
  return {segments, calls};
}

}  // namespace

double LlmWork::iteration_s() const {
  const double ring =
      ring_flows > 0 ? kLlmRingSeconds8k * std::pow(ring_flows / 8000.0, kLlmRingExponent) : 0.0;
  return kLlmSegmentSeconds * segments + kLlmMessageSeconds * messages + dp_calls * ring;
}

double LlmWork::records_bytes() const { return kLlmEventBytes * events() / replicas; }

LlmWork estimate_llm_work(const LlmSetup& llm, int gpus_per_node, int replicas) {
  const models::ParallelConfig& p = llm.parallel;
  const models::TransformerSpec& model = llm.model;
  // Per block and for the ends (embedding, output), from the step of a one- and a two-block
  // model on one stage: building the whole step of a 65,536-block model took seconds.
  models::ParallelConfig one = p;
  one.pp = one.virtual_stages = one.dp = 1;
  one.schedule = models::PipelineSchedule::k1F1B;
  one.first_stage_layers = one.last_stage_layers = 0;
  one.zero_stage = 0;
  one.recompute_every = 1;
  models::TransformerSpec m1 = model, m2 = model;
  m1.layers = 1;
  m2.layers = 2;
  const auto per_block = [&](models::Recompute r) {
    one.recompute = r;
    const auto a = step_counts(m1, one), b = step_counts(m2, one);
    const std::pair<double, double> block{b.first - a.first, b.second - a.second};
    return std::pair{block, std::pair{a.first - block.first, a.second - block.second}};
  };
  const auto [plain, ends] =
      per_block(p.recompute == models::Recompute::kFull ? models::Recompute::kNone : p.recompute);
  const double layers = static_cast<double>(model.layers);
  double segs = ends.first + layers * plain.first, calls = ends.second + layers * plain.second;
  if (p.recompute == models::Recompute::kFull) {
    const auto full = per_block(models::Recompute::kFull).first;
    const double k = std::floor(layers / std::max(1, p.recompute_every));
    segs += k * (full.first - plain.first);
    calls += k * (full.second - plain.second);
  }
  const int v = p.schedule == models::PipelineSchedule::kInterleaved1F1B ? p.virtual_stages : 1;
  const double chunks = static_cast<double>(p.pp) * v;
  const double m = static_cast<double>(p.micro_batches());
  LlmWork w;
  w.replicas = std::max(1, replicas);
  // A chunk's last segment (its last residual add) is its own: one more per chunk and pass.
  w.segments = w.replicas * m * (segs + 2.0 * (chunks - 1));
  w.messages = w.replicas * m * (calls + 2.0 * (chunks - 1));
  // DP collectives of a chunk per iteration (llm_step.cpp dp_comms): ZeRO 0 one all-reduce,
  // 1 and 2 a reduce-scatter and an all-gather (ZeRO 2 at pp 1 reduces per micro-batch), 3
  // gathers twice and reduces per micro-batch at pp 1, once each under a pipeline.
  const int group = p.dp * p.cp;
  if (group > 1) {
    double per_chunk = 1;
    if (p.zero_stage == 1 || p.zero_stage == 2)
      per_chunk = 1 + (p.zero_stage == 2 && p.pp == 1 ? m : 1);
    if (p.zero_stage == 3) per_chunk = p.pp > 1 ? 2 : 3 * m;
    w.dp_calls = chunks * per_chunk;
    // One ring per channel: as many as the group has members on a node (communicator.hpp).
    const RankLayout layout(p);
    RankCoord base;
    int channels = 0;
    const int gpn = std::max(1, gpus_per_node);
    std::vector<int> ranks;
    for (int c : layout.group(models::ParallelDim::kCp, base))
      for (int r : layout.group(models::ParallelDim::kDp, layout.coord_of(c))) ranks.push_back(r);
    std::sort(ranks.begin(), ranks.end());
    for (int r : ranks) channels += slot_of(r, gpn).node == slot_of(ranks.front(), gpn).node;
    const bool several_nodes = slot_of(ranks.back(), gpn).node != slot_of(ranks.front(), gpn).node;
    w.ring_flows = static_cast<double>(group) * (several_nodes ? std::max(1, channels) : 1);
  }
  return w;
}

namespace {

// 25 s, 7 min, 7.0 h.
std::string wall_time(double s) {
  if (s >= 3600) return fmt::format("{:.1f} h", s / 3600);
  if (s >= 60) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.2g} s", s);
}

}  // namespace

std::string llm_cost_warning(const LlmWork& work, int total_iterations) {
  const double wall = work.iteration_s() * total_iterations;
  if (wall <= kLlmWarnSeconds) return "";
  return fmt::format(
      "this LLM point will take about {} of wall time ({} iteration{} at about {} each: {} "
      "compute segments and {} messages an iteration{}) and keep about {} of records; fewer "
      "iterations, micro-batches (parallel.global_batch) or a smaller data-parallel degree run "
      "faster (sim/README.md, \"LLM job cost\")",
      wall_time(wall), total_iterations, total_iterations == 1 ? "" : "s",
      wall_time(work.iteration_s()), common::format_count(std::llround(work.segments)),
      common::format_count(std::llround(work.messages)),
      work.ring_flows > 0 ? fmt::format(", {} data-parallel collective(s) of {} flows",
                                        common::format_count(std::llround(work.dp_calls)),
                                        common::format_count(std::llround(work.ring_flows)))
                          : std::string(),
      common::format_quantity(work.records_bytes(), common::Quantity::kSize));
}

LlmSetup load_llm_for_nodes(const ConfigNode& root, const std::string& model_ref,
                            const std::vector<int>& nodes, int gpus_per_node,
                            const platforms::Platform& machine, bool memory_check,
                            const ConfigNode& nodes_key) {
  if (nodes.size() != 1)
    nodes_key.fail(
        "expected one node count for a scenario with `parallel:` (its GPUs are tp x pp "
        "x cp x dp)");
  const int gpn = job_gpus_per_node(machine, gpus_per_node);
  LlmSetup out =
      load_llm_setup(root, model_ref,
                     static_cast<int>(std::min<long>(static_cast<long>(nodes.front()) * gpn,
                                                     std::numeric_limits<int>::max())),
                     machine, memory_check);
  // The simulated work of one iteration, bounded before anything runs (4,096 micro-batches of
  // a 65,536-block model needed about 900 GB; 100,000 nodes of Llama 3 8B at tp 8 hours).
  int replicas = 1;
  if (auto v = root.optional("variability")) {
    const double noise = v->quantity_or("compute_noise", common::Quantity::kFraction, 0.0);
    const double share = v->quantity_or("stragglers", common::Quantity::kFraction, 0.0);
    const double slow =
        v->has("straggler_slowdown") ? v->required("straggler_slowdown").as_double() : 1.0;
    if (noise > 0.0 || (share > 0.0 && slow != 1.0)) replicas = out.parallel.dp;
  }
  const LlmWork w = estimate_llm_work(out, gpn, replicas);
  const ConfigNode parallel = root.required("parallel");
  const auto at = [&](const char* key) {
    return parallel.has(key) ? parallel.required(key) : parallel;
  };
  if (w.ring_flows > kMaxLlmRingFlows)
    at("dp").fail(fmt::format(
        "expected data-parallel collectives of at most {} flows, got {} (dp {}{} members x {} "
        "ring{}, one per GPU of the group on a node): the max-min sharing of one such ring "
        "takes about {:.0f} s of wall time at 8,000 flows and grows with the 2.5th power of "
        "them, about {} here ({} an iteration)",
        common::format_count(static_cast<std::int64_t>(kMaxLlmRingFlows)),
        common::format_count(std::llround(w.ring_flows)), common::format_count(out.parallel.dp),
        out.parallel.cp > 1 ? fmt::format(" x cp {}", out.parallel.cp) : std::string(),
        common::format_count(std::llround(w.ring_flows / (out.parallel.dp * out.parallel.cp))),
        w.ring_flows > out.parallel.dp * out.parallel.cp ? "s" : "", kLlmRingSeconds8k,
        wall_time(kLlmRingSeconds8k * std::pow(w.ring_flows / 8000.0, kLlmRingExponent)),
        common::format_count(std::llround(w.dp_calls))));
  if (w.events() > kMaxLlmEventsPerIteration) {
    const std::string msg = fmt::format(
        "one iteration would simulate {} events ({} compute segments and {} messages: {} "
        "micro-batches x {} blocks{}); expected at most {} (about {} of records and {} of wall "
        "time an iteration here; sim/README.md, \"LLM job cost\")",
        common::format_count(std::llround(w.events())),
        common::format_count(std::llround(w.segments)),
        common::format_count(std::llround(w.messages)),
        common::format_count(out.parallel.micro_batches()), common::format_count(out.model.layers),
        replicas > 1 ? fmt::format(" x {} replicas simulated for variability", replicas)
                     : std::string(),
        common::format_count(static_cast<std::int64_t>(kMaxLlmEventsPerIteration)),
        common::format_quantity(w.records_bytes(), common::Quantity::kSize),
        wall_time(w.iteration_s()));
    if (replicas > 1) root.required("variability").fail(msg);
    if (out.parallel.micro_batches() > 1) at("global_batch").fail(msg);
    root.required("model").fail(msg);
  }
  return out;
}

}  // namespace scalecast::sim
