#pragma once
// The scenario keys of the training strategy and its gradient transport, checked against the
// platform when the scenario is loaded (called by scenario.cpp after `allreduce`):
//   strategy: data_parallel | parameter_server
//   parameter_server: {tasks, placement: colocated | cpu, mode: sync | async,
//                      variables: cpu | gpu}   (required with, and only with, parameter_server)
//   allreduce.transport: tcp needs a NIC that carries TCP/IP (Ethernet or InfiniBand: IPoIB);
//   allreduce.library: mpi_cpu and CPU-side variables need the CPUs' memory bandwidth;
//   precision: every GPU of the machine needs a peak for the step's matrix ops at it (fp16
//   without tensor_fp16 or fp16 on a platform's own GPU entry is an error at `precision`).
// Errors are ConfigErrors at the offending key (file:line:col).

#include "common/config_node.hpp"
#include "platforms/platform.hpp"
#include "sim/scenario.hpp"

namespace scalecast::sim {

void load_strategy(const common::ConfigNode& root, Scenario& s, const platforms::Platform& machine);

}  // namespace scalecast::sim
