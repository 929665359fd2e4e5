#include "sim/scenario_runner.hpp"

#include <stdexcept>

namespace scalecast::sim {

// Wired to the platform builder, the model zoo and the cost model once those layers are merged
// (sim/README.md "Status").
JobResult run_point(const Scenario&, const PointRequest&) {
  throw std::runtime_error(
      "run: the platform, model and cost-model layers are not merged into this build yet");
}

StepProgram build_program(const Scenario&, const std::string&) {
  throw std::runtime_error(
      "run: the model and cost-model layers are not merged into this build yet");
}

}  // namespace scalecast::sim
