#pragma once
// One point of a scenario, simulated in this process: create the SimGrid engine, build the
// platform (nodes placed packed or spread over the machine), the training step of the model
// priced by the cost model, and the data-parallel job; run; return the job's result. SimGrid
// allows one engine per process, so call this at most once per process (the CLI forks a child
// per point).

#include "sim/job.hpp"
#include "sim/scenario.hpp"
#include "sim/step_program.hpp"

namespace scalecast::sim {

struct PointRequest {
  int nodes = 1;
  int gpus_per_node = 0;  // 0: the scenario's value (0 there: every GPU of the node)
};

JobResult run_point(const Scenario& scenario, const PointRequest& request);

// The scenario's model as a step program priced for the platform's GPU (no engine needed).
StepProgram build_program(const Scenario& scenario, const std::string& gpu_type_hint = "");

}  // namespace scalecast::sim
