#pragma once
// One point of an LLM scenario, simulated in this process: the platform, the placement of the
// ranks (Megatron order, or the stages on the GPU types `stage_gpus` lists), each chunk's ops
// priced by the cost model on its stage's GPU, the pipeline job run, and the figures a team
// planning a run reads: tokens/s, MFU and HFU, the breakdown with the bubble and each exposed
// communication, memory per stage, the bottleneck stage.

#include <string>
#include <vector>

#include "calibration/cost_model.hpp"
#include "models/parallel_config.hpp"
#include "sim/pipeline_job.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_runner.hpp"

namespace scalecast::sim {

struct LlmPointResult {
  PipelineResult pipeline;
  std::string model;
  models::ParallelConfig parallel;
  std::int64_t seq_len = 0;
  int nodes = 0, gpus_per_node = 0, gpus = 0;
  double tokens_per_iteration = 0.0;
  // FLOPs per iteration over all GPUs: model (3 x forward, full s^2 attention) and hardware
  // (executed: causal attention at half with flash_attention, + recomputation).
  double model_flops = 0.0, hardware_flops = 0.0;
  double peak_flops_per_gpu = 0.0;          // dense tensor peak of the slowest stage's GPU
  std::string peak_basis;                   // e.g. "tensor_bf16 of h100-sxm"
  std::vector<std::string> stage_gpu;       // per stage, the GPU it ran on
  std::vector<models::StageMemory> memory;  // per stage
  std::vector<double> stage_device_bytes;   // per stage, its GPU's memory
  int bottleneck_stage = 0;                 // the stage with the most compute + optimizer
  std::vector<std::string> tiers;           // cost-model tiers that priced the ops
  double dp_flow_factor = 1.0;

  double tokens_per_s() const { return tokens_per_iteration / pipeline.iteration_time_s; }
  double mfu() const {
    return model_flops / (pipeline.iteration_time_s * gpus * peak_flops_per_gpu);
  }
  double hfu() const {
    return hardware_flops / (pipeline.iteration_time_s * gpus * peak_flops_per_gpu);
  }
};

class MachinePlatform;

// A pipeline job ready to be created on a built platform: its spec (chunks priced by the cost
// model on their stage's GPU) and the figures known before it runs (sizes, FLOPs, peak, memory).
struct LlmJobPlan {
  PipelineJobSpec spec;
  LlmPointResult result;  // without `pipeline` and `bottleneck_stage` (finish_llm_result)
};

// The scenario's LLM job on `nodes` nodes of `platform` with `gpus_per_node` ranks each (0: the
// platform's first node's GPUs): on `node_list` when given (a job of a mix), else placed as a
// single job is. Throws std::invalid_argument as run_llm_point.
LlmJobPlan plan_llm_job(const Scenario& scenario, int nodes, int gpus_per_node,
                        std::vector<int> node_list, const MachinePlatform& platform,
                        const calibration::CostModel& cost_model);

// Completes a plan's result with the job's simulated result and its bottleneck stage.
void finish_llm_result(LlmPointResult& result, PipelineResult pipeline);

// Throws std::invalid_argument for a point the job cannot be placed on (GPUs per node, stage GPU
// types not available) or an op priced at a NaN/infinite/negative time.
LlmPointResult run_llm_point(const Scenario& scenario, const PointRequest& request,
                             const calibration::CostModel& cost_model);

}  // namespace scalecast::sim
