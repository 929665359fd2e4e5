#pragma once
// TensorFlow's parameter-server strategy (tf.train.replica_device_setter): the variables are
// sharded over PS tasks, each worker pushes every gradient to the task that holds its variable
// as soon as the backward pass produces it, the task applies the update in its memory, and the
// worker pulls the updated variables before its next forward pass. Placement is TensorFlow's
// default, round-robin by variable in creation order (`_RoundRobinStrategy`, the default
// `ps_strategy` of replica_device_setter) [TF-device_setter], or greedy by size
// (GreedyLoadBalancingStrategy, as tf_cnn_benchmarks places them; `PsSharding`). The engine side is
// job_parameter_server.cpp; sim/README.md ("Parameter servers") describes the model and its costs.

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
// How the variables are spread over the tasks, in creation order: round-robin (TensorFlow's
// default `ps_strategy`) or greedy by bytes, each variable to the task holding the fewest bytes so
// far, the lowest index on a tie (`GreedyLoadBalancingStrategy` with `byte_size_load_fn`), which
// tf_cnn_benchmarks' distributed parameter_server mode uses
// (`VariableMgrDistributedFetchFromPS.get_devices`) [tf_cnn_benchmarks-variable_mgr].
enum class PsSharding { kRoundRobin, kGreedy };

std::string_view to_string(PsPlacement p);
std::string_view to_string(PsMode m);
std::string_view to_string(PsVariables v);
std::optional<PsPlacement> parse_ps_placement(std::string_view text);
std::optional<PsMode> parse_ps_mode(std::string_view text);
std::optional<PsVariables> parse_ps_variables(std::string_view text);
std::string_view to_string(PsSharding s);
std::optional<PsSharding> parse_ps_sharding(std::string_view text);

// Bytes per second at which one TensorFlow 1.x process takes received tensors out of gRPC:
// 0.9 GB/s, measured for a tensor assigned from one TensorFlow process to a variable in another
// (worker to worker RecvTensor over loopback, so no NIC limit) on a Xeon E5-2630 v3 (Haswell-EP,
// 2.4 GHz) [TF-issue6116]; the issue profiles 100 MB tensors and puts the time in the receiving
// side's copies out of gRPC's buffers (the comment giving 0.9 GB/s does not state its size).
// Every received tensor of a process passes through one thread: TensorFlow 1.x's gRPC client
// completion queue is polled by a single thread per process, which runs each RecvTensor's
// completion and parse (`GrpcWorkerCache`'s `polling_thread_`, "TODO: replace this thread with a
// threadpool") [TF-grpc_worker_cache], so a parameter-server task takes all workers' pushes one
// after the other, and a worker all tasks' pulls. The same measurements found the rate falling
// further for larger tensors (520-569 MB/s at 128 MB, "below 100 MB/s for larger messages": gRPC's
// slice buffer handed slices out one at a time) [TF-issue6256] [gRPC-issue8975]: see the rate
// for large tensors below.
inline constexpr double kTfGrpcReceiveBps = 0.9e9;

// The same receive path for one large tensor: 0.545 GB/s, the mean of the two rates measured for
// 128 MB messages worker to worker (benchmark_grpc_recv.py --data_mb=128: "Distributed rate:
// 569.27 MB/s"; "hits 520 MB/second for the same message size") [TF-issue6256]. The source says
// the rate keeps falling for larger messages ("degrading below 100 MB/second"; gRPC's incoming byte
// stream hands a message's slices out one at a time [gRPC-issue8975]) but gives no size for that,
// so the 128 MB rate is used for every larger tensor, an upper bound for VGG-16's 411 MB fc6.
// Between kTfGrpcSmallTensorBytes (the 100 MB tensors kTfGrpcReceiveBps was profiled with) and
// kTfGrpcLargeTensorBytes the rate is interpolated linearly in the size [assumption: no point
// between the two is measured].
inline constexpr double kTfGrpcReceiveLargeBps = (569.27e6 + 520e6) / 2.0;
inline constexpr double kTfGrpcSmallTensorBytes = 100e6;
inline constexpr double kTfGrpcLargeTensorBytes = 128e6;

struct ParameterServerConfig {
  int tasks = 0;  // 0: no parameter servers (collective data parallelism)
  PsPlacement placement = PsPlacement::kColocated;
  PsMode mode = PsMode::kSync;
  PsVariables variables = PsVariables::kCpu;
  PsSharding sharding = PsSharding::kRoundRobin;
  // Rate at which each process (task or worker) takes received tensors out of gRPC, one tensor
  // at a time (see kTfGrpcReceiveBps), for tensors up to kTfGrpcSmallTensorBytes; 0: free (no
  // gRPC cost at any size).
  double receive_Bps = kTfGrpcReceiveBps;
  // The rate for tensors of kTfGrpcLargeTensorBytes and more (kTfGrpcReceiveLargeBps),
  // interpolated in between; 0: free.
  double receive_large_Bps = kTfGrpcReceiveLargeBps;
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

// The same for greedy sharding: the variables in creation order (the reverse of the ready
// order), each to the task with the fewest bytes so far (the lowest index on a tie).
std::vector<int> greedy_shards(const StepProgram& program, int tasks);

// `round_robin_shards` or `greedy_shards` as `sharding` says.
std::vector<int> ps_shards(const StepProgram& program, int tasks, PsSharding sharding);

// Time a task needs to update `bytes` of its variables at `memory_Bps`: asynchronous, one
// worker's gradient; synchronous, `workers` accumulations plus the update.
double ps_update_s(double bytes, double memory_Bps, PsMode mode, int workers);

// The rate at which one process takes a received tensor of `bytes` out of gRPC: `small_Bps` up
// to kTfGrpcSmallTensorBytes, `large_Bps` from kTfGrpcLargeTensorBytes, linear in the size in
// between. 0 (free) when `small_Bps` is 0 (gRPC off), and for tensors above 100 MB when
// `large_Bps` is 0.
double grpc_receive_rate(double bytes, double small_Bps, double large_Bps);

// Time one process's gRPC thread needs to take `messages` received tensors of `bytes` each out
// of gRPC (grpc_receive_rate; 0: free), one after the other.
double ps_receive_s(double bytes, int messages, double small_Bps,
                    double large_Bps = kTfGrpcReceiveLargeBps);

}  // namespace scalecast::sim
