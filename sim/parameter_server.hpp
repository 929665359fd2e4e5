#pragma once
// TensorFlow's parameter-server strategy (tf.train.replica_device_setter): the variables are
// sharded over PS tasks, each worker pushes every gradient to the task that holds its variable
// as soon as the backward pass produces it, the task applies the update in its memory, and the
// worker pulls the updated variables before its next forward pass. Placement is TensorFlow's
// default, round-robin by variable in creation order (`_RoundRobinStrategy`, the default
// `ps_strategy` of replica_device_setter; GreedyLoadBalancingStrategy, by size, is opt-in)
// [TF-device_setter]. The engine side is job_parameter_server.cpp; sim/README.md ("Parameter
// servers") describes the model and its costs.

#include <optional>
#include <string_view>
#include <vector>

#include "sim/step_program.hpp"

namespace scalecast::sim {

// Where PS tasks run: on the job's own nodes (task k on job node k) or on CPU hosts of their
// own (the platform nodes after the job's, task k on the k-th of them).
enum class PsPlacement { kColocated, kCpu };
// Synchronous: each task applies one update per step from all workers' gradients, and workers
// pull after it; asynchronous: each worker's gradients are applied as they arrive and the worker
// pulls at once, without waiting for the others.
enum class PsMode { kSync, kAsync };
// Where a task keeps its variables: CPU memory (the socket's host) or the memory of the node's
// first GPU (TensorFlow's local_parameter_device=gpu).
enum class PsVariables { kCpu, kGpu };

std::string_view to_string(PsPlacement p);
std::string_view to_string(PsMode m);
std::string_view to_string(PsVariables v);
std::optional<PsPlacement> parse_ps_placement(std::string_view text);
std::optional<PsMode> parse_ps_mode(std::string_view text);
std::optional<PsVariables> parse_ps_variables(std::string_view text);

struct ParameterServerConfig {
  int tasks = 0;  // 0: no parameter servers (collective data parallelism)
  PsPlacement placement = PsPlacement::kColocated;
  PsMode mode = PsMode::kSync;
  PsVariables variables = PsVariables::kCpu;
};

// Bytes of memory traffic per byte of variable: an update reads the variable and the gradient
// and writes the variable (plain SGD), and with synchronous training each worker's gradient is
// first added into the task's accumulator (read accumulator and gradient, write accumulator:
// TensorFlow's ConditionalAccumulator under SyncReplicasOptimizer).
inline constexpr double kUpdateTrafficPerByte = 3.0;

// Task of each gradient of `program` (index in ready order) for `tasks` tasks: round-robin over
// the variables in creation order, taken as the reverse of the ready order (the backward pass
// produces the last-created variables' gradients first).
std::vector<int> round_robin_shards(const StepProgram& program, int tasks);

// Time a task needs to update `bytes` of its variables at `memory_Bps`: asynchronous, one
// worker's gradient; synchronous, `workers` accumulations plus the update.
double ps_update_s(double bytes, double memory_Bps, PsMode mode, int workers);

}  // namespace scalecast::sim
