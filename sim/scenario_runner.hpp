#pragma once
// One point of a scenario, simulated in this process: create the SimGrid engine, build the
// platform (the first N nodes, or N nodes spread over the machine), the model's training step
// priced by the cost model for the nodes' GPU, and the data-parallel job; run; return the job's
// result. SimGrid allows one engine per process, so call run_point at most once per process
// (the CLI starts a child process per point).

#include <functional>

#include "calibration/cost_model.hpp"
#include "calibration/database.hpp"
#include "models/training_step.hpp"
#include "sim/job.hpp"
#include "sim/platform_builder.hpp"
#include "sim/scenario.hpp"
#include "sim/step_program.hpp"

namespace scalecast::sim {

struct PointRequest {
  PointRequest(int n = 1, int g = 0) : nodes(n), gpus_per_node(g) {}
  int nodes = 1;
  int gpus_per_node = 0;  // 0: the scenario's value (0 there: every GPU of the node)
  // Progress only: called as each simulated iteration ends (done, total); see JobSpec.
  std::function<void(int, int)> on_iteration;
};

// `collectives_db`: the scenario's calibration database; its measured all-reduces of the job's
// GPU replace the datasheet terms of NCCL's model (null: datasheet only).
JobResult run_point(const Scenario& scenario, const PointRequest& request,
                    const calibration::CostModel& cost_model,
                    const calibration::Database* collectives_db = nullptr);

// The job of one point on an already built machine (`platform`, built from `machine`): what
// run_point simulates. `node_list` (empty: the scenario's placement) gives the platform nodes in
// rank order, request.nodes of them (several jobs on one machine, sim/multi_job_scenario.hpp).
JobSpec point_job_spec(const Scenario& scenario, const PointRequest& request,
                       const std::vector<int>& node_list, const platforms::Platform& machine,
                       const MachinePlatform* platform, const calibration::CostModel& cost_model,
                       const calibration::Database* collectives_db);

// The training step every rank of a scenario's point runs: `model` at the scenario's batch per
// GPU, precision and sequence length (seq_len 0: the model's default).
models::TrainingStep scenario_step(const Scenario& scenario, const models::Model& model);

// Host-to-device bytes per sample: the scenario's value, else the model input as decoded 8-bit
// images (C*H*W bytes, as DALI-style loaders copy them) or 32-bit token ids, one per token of
// the sequence length `step` was built for.
double scenario_sample_bytes(const Scenario& scenario, const models::Model& model,
                             const models::TrainingStep& step);

// A training step priced on `gpu`: every op's duration and tier from the cost model, memcpy ops
// on the copy stream, the optimizer ops flagged, gradients in ready order.
StepProgram build_program(const models::TrainingStep& step, const calibration::CostModel& cost,
                          const platforms::GpuSpec& gpu, int batch_per_gpu, double input_bytes);

// Name of a cost tier as ops.csv writes it.
const char* tier_name(calibration::CostTier tier);

}  // namespace scalecast::sim
