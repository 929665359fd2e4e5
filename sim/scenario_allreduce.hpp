#pragma once
// The scenario's `allreduce:` block (keys in scenarios/README.md), read and then checked against
// the platform when the scenario is loaded (called by scenario.cpp): an NCCL algorithm or
// protocol forced by the scenario must exist at every node count (NVLS needs Hopper and
// NVSwitch, CollNet `network.sharp`), and `collnet: true` must be able to change something.
// Errors are ConfigErrors at the offending key (file:line:col).

#include "common/config_node.hpp"
#include "platforms/platform.hpp"
#include "sim/collective_config.hpp"
#include "sim/scenario.hpp"

namespace scalecast::sim {

void load_allreduce(const common::ConfigNode& a, AllReduceConfig& c);

// `a` is the `allreduce:` node the scenario's AllReduceConfig came from.
void check_collective_choice(const common::ConfigNode& a, const Scenario& s,
                             const platforms::Platform& machine);

}  // namespace scalecast::sim
