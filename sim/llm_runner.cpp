#include "sim/llm_runner.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "calibration/collective_model.hpp"
#include "models/llm_step.hpp"
#include "platforms/platform.hpp"
#include "sim/cluster.hpp"
#include "sim/engine_setup.hpp"
#include "sim/platform_builder.hpp"
#include "sim/rank_layout.hpp"
#include "sim/transport.hpp"

namespace scalecast::sim {
namespace {

// The dense tensor-core peak MFU and HFU are stated against: BF16 (FP8 runs too, as Llama 3 and
// Megatron report them), FP16 where the precision is FP16 or the GPU has no BF16 (V100).
std::pair<double, std::string> peak_of(const platforms::GpuSpec& g, models::LlmPrecision p) {
  if (p != models::LlmPrecision::kFp16 && g.tensor_bf16_flops > 0.0)
    return {g.tensor_bf16_flops, "tensor_bf16"};
  return {g.tensor_fp16_flops, "tensor_fp16"};
}

// Job node indices: without stage GPU types as run_point places them (packed or spread); with
// them, each stage's ranks (a contiguous block when pp is the outermost dimension) on the next
// free nodes of its type.
std::vector<int> place_nodes(const Scenario& s, const LlmSetup& llm, const MachinePlatform& pf,
                             int nodes, int gpn) {
  std::vector<int> out;
  if (llm.stage_gpus.empty()) {
    for (int i = 0; i < nodes; ++i)
      out.push_back(s.placement == Placement::kPacked
                        ? i
                        : static_cast<int>(static_cast<long>(i) * pf.node_count() / nodes));
    return out;
  }
  const models::ParallelConfig& p = llm.parallel;
  const int per_stage = p.tp * p.cp * p.dp;
  if (p.order.back() != models::ParallelDim::kPp || per_stage % gpn != 0)
    throw std::invalid_argument(
        "stage_gpus needs pp as the outermost dimension of parallel.order and whole nodes per "
        "stage (tp x cp x dp = " +
        std::to_string(per_stage) + " GPUs, " + std::to_string(gpn) + " per node)");
  std::vector<char> used(static_cast<std::size_t>(pf.node_count()), 0);
  for (int st = 0; st < p.pp; ++st) {
    int need = per_stage / gpn;
    for (int n = 0; n < pf.node_count() && need > 0; ++n) {
      if (used[static_cast<std::size_t>(n)] ||
          pf.node_type(n).gpu.name != llm.stage_gpus[static_cast<std::size_t>(st)])
        continue;
      used[static_cast<std::size_t>(n)] = 1;
      out.push_back(n);
      --need;
    }
    if (need > 0)
      throw std::invalid_argument("stage " + std::to_string(st) + " needs " +
                                  std::to_string(per_stage / gpn) + " nodes of " +
                                  llm.stage_gpus[static_cast<std::size_t>(st)] +
                                  "; the machine has too few free ones");
  }
  return out;
}

double price(const std::vector<models::Op>& ops, const calibration::CostModel& cost,
             const platforms::GpuSpec& gpu, std::set<std::string>& tiers) {
  double t = 0.0;
  for (const models::Op& op : ops) {
    const calibration::OpCost c = cost.op_time(op, gpu);
    if (!std::isfinite(c.time_s) || c.time_s < 0.0)
      throw std::invalid_argument("op " + op.name + " on " + gpu.name + ": the cost model (" +
                                  tier_name(c.tier) + " tier) gave a duration of " +
                                  std::to_string(c.time_s) +
                                  " s; expected a finite time >= 0 (check the calibration data)");
    tiers.insert(tier_name(c.tier));
    t += c.time_s;
  }
  return t;
}

}  // namespace

LlmJobPlan plan_llm_job(const Scenario& s, int nodes, int gpus_per_node, std::vector<int> node_list,
                        const MachinePlatform& platform, const calibration::CostModel& cost_model) {
  if (!s.llm) throw std::invalid_argument("plan_llm_job: the scenario has no `parallel:`");
  const LlmSetup& llm = *s.llm;
  const models::ParallelConfig& p = llm.parallel;
  const int gpn = gpus_per_node > 0
                      ? gpus_per_node
                      : platform.gpus_per_node(node_list.empty() ? 0 : node_list.front());
  if (static_cast<long>(nodes) * gpn != p.gpus())
    throw std::invalid_argument(std::to_string(nodes) + " nodes x " + std::to_string(gpn) +
                                " GPUs is not tp x pp x cp x dp = " + std::to_string(p.gpus()) +
                                " GPUs");
  LlmJobPlan plan;
  PipelineJobSpec& spec = plan.spec;
  spec.name = s.name;
  spec.parallel = p;
  spec.nodes = node_list.empty() ? place_nodes(s, llm, platform, nodes, gpn) : std::move(node_list);
  if (static_cast<int>(spec.nodes.size()) != nodes)
    throw std::invalid_argument("plan_llm_job: " + std::to_string(spec.nodes.size()) +
                                " nodes listed for a job of " + std::to_string(nodes));
  spec.gpus_per_node = gpn;
  for (int n : spec.nodes)
    if (platform.gpus_per_node(n) < gpn)
      throw std::invalid_argument("the point asks for " + std::to_string(gpn) +
                                  " GPUs per node; node " + std::to_string(n) + " has " +
                                  std::to_string(platform.gpus_per_node(n)));
  spec.warmup = s.warmup;
  spec.iterations = s.iterations;
  spec.variability = {s.compute_noise_cv, s.straggler_fraction, s.straggler_slowdown, s.seed};

  LlmPointResult& r = plan.result;
  r.model = llm.model.name;
  r.parallel = p;
  r.seq_len = llm.seq_len();
  r.nodes = nodes;
  r.gpus_per_node = gpn;
  r.gpus = p.gpus();
  const RankLayout layout(p);
  const auto stage_slot = [&](int stage) {
    RankCoord c;
    c.pp = stage;
    return slot_of(layout.rank_of(c), gpn);
  };
  std::vector<const platforms::GpuSpec*> stage_gpu;
  for (int st = 0; st < p.pp; ++st) {
    const GpuSlot g = stage_slot(st);
    stage_gpu.push_back(&platform.node_type(spec.nodes[static_cast<std::size_t>(g.node)]).gpu);
    r.stage_gpu.push_back(stage_gpu.back()->name);
    r.stage_device_bytes.push_back(stage_gpu.back()->memory_bytes);
  }
  // The TP ranks that send through the NIC of stage 0's simulated GPU carry their DP rings
  // through it too: the simulated ring carries their bytes (pipeline_job.hpp).
  {
    const GpuSlot g0 = stage_slot(0);
    const int node = spec.nodes[static_cast<std::size_t>(g0.node)];
    const int nic = platform.nic_of_gpu(node, g0.local);
    int sharing = 0;
    for (int rank : layout.group(models::ParallelDim::kTp, RankCoord{})) {
      const GpuSlot g = slot_of(rank, gpn);
      if (g.node == g0.node && platform.nic_of_gpu(node, g.local) == nic) ++sharing;
    }
    spec.dp_flow_factor = std::max(1, sharing);
    r.dp_flow_factor = spec.dp_flow_factor;
  }
  // NICs without RDMA (the scenario's transport is then tcp): NCCL's socket transport, the same
  // TCP parameters as a data-parallel job's (scenario_runner.cpp set_host_exchange).
  if (s.allreduce.transport == Transport::kTcp)
    spec.socket_factor =
        tcp_params_for(platform.node_type(spec.nodes.front()).nic.technology).nccl_flow_factor();
  // NCCL's tuning model for the TP, CP and DP groups (the first node's type stands for the
  // job's, as for a data-parallel job): its protocols and latencies, NVLS on one node.
  if (s.allreduce.library == Library::kNccl && s.allreduce.nccl_tuner) {
    const platforms::Platform* machine = &platform.description();
    const platforms::NodeType* type = &platform.node_type(spec.nodes.front());
    spec.nccl_topology = [machine, type](int group_nodes, int per_node) {
      // A group on nodes of another type (stage_gpus) may hold more GPUs per node than this one.
      return calibration::nccl_topology(*machine, *type, group_nodes,
                                        std::min(per_node, type->gpu_count), false);
    };
  }
  const std::vector<models::ChunkStep> steps = models::build_llm_step(llm.model, p);
  std::set<std::string> tiers;
  for (const models::ChunkStep& step : steps) {
    const platforms::GpuSpec& gpu = *stage_gpu[static_cast<std::size_t>(step.layers.pp_rank)];
    PricedChunk pc;
    for (const models::LlmSegment& seg : step.forward)
      pc.forward.push_back({price(seg.ops, cost_model, gpu, tiers), seg.comms});
    for (const models::LlmSegment& seg : step.backward)
      pc.backward.push_back({price(seg.ops, cost_model, gpu, tiers), seg.comms});
    pc.send_forward_bytes = step.send_forward_bytes;
    pc.send_backward_bytes = step.send_backward_bytes;
    pc.dp_comms = step.dp_comms;
    pc.optimizer_s = price(step.optimizer_ops, cost_model, gpu, tiers);
    spec.chunks.push_back(std::move(pc));
  }
  r.tiers.assign(tiers.begin(), tiers.end());
  r.memory = models::estimate_stage_memory(llm.model, p);
  // MFU against the slowest stage GPU's peak (the one that paces the pipeline).
  double peak = 0.0;
  for (const platforms::GpuSpec* g : stage_gpu) {
    const auto [f, basis] = peak_of(*g, p.precision);
    if (peak == 0.0 || f < peak) {
      peak = f;
      r.peak_basis = basis + " of " + g->name;
    }
  }
  r.peak_flops_per_gpu = peak;
  r.tokens_per_iteration = static_cast<double>(p.global_batch) * static_cast<double>(r.seq_len);
  r.model_flops = models::training_flops_per_token(llm.model, p, false) * r.tokens_per_iteration;
  // Hardware FLOPs are what the GPUs execute: attention's s^2 terms as the kernel runs them (the
  // causal half with fused attention), so HFU stays a share of the peak; model FLOPs keep the
  // sources' full-s^2 convention (kMfuFormula).
  r.hardware_flops = models::training_flops_per_token(llm.model, p, true, p.flash_attention) *
                     r.tokens_per_iteration;

  return plan;
}

void finish_llm_result(LlmPointResult& r, PipelineResult pipeline) {
  r.pipeline = std::move(pipeline);
  double worst = -1.0;
  for (std::size_t st = 0; st < r.pipeline.stages.size(); ++st) {
    const double busy = r.pipeline.stages[st].compute_s + r.pipeline.stages[st].optimizer_s;
    if (busy > worst) {
      worst = busy;
      r.bottleneck_stage = static_cast<int>(st);
    }
  }
}

LlmPointResult run_llm_point(const Scenario& s, const PointRequest& request,
                             const calibration::CostModel& cost_model) {
  if (!s.llm) throw std::invalid_argument("run_llm_point: the scenario has no `parallel:`");
  const platforms::Platform machine =
      sized_platform(s, platforms::load_platform(s.platform), request.nodes);
  auto engine = create_engine({s.network});
  BuildOptions options;
  options.network = s.network;
  options.nodes =
      s.placement == Placement::kPacked && s.llm->stage_gpus.empty() ? request.nodes : 0;
  auto platform = build_platform(*engine, machine, options);
  const int wanted = request.gpus_per_node > 0 ? request.gpus_per_node : s.gpus_per_node;
  LlmJobPlan plan = plan_llm_job(s, request.nodes, wanted, {}, *platform, cost_model);
  plan.spec.on_iteration = request.on_iteration;
  PipelineJob job(*platform, std::move(plan.spec));
  engine->run();
  finish_llm_result(plan.result, job.result());
  return plan.result;
}

}  // namespace scalecast::sim
