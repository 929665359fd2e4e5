#pragma once
// A synthetic platform for engine-speed checks: N nodes in one star zone, each GPU with a
// private link to its node's NIC link, which all the node's GPUs share. It needs no platform or
// model files, so bench/ can time the replay engine alone (bench_replay_synthetic).

#include "sim/job.hpp"

namespace scalecast::sim {

struct StarLinks {
  double nic_bandwidth = 12.5e9;  // bytes/s, one EDR port
  double nic_latency_s = 1e-6;
  double gpu_bandwidth = 50e9;  // bytes/s, GPU to NIC
  double gpu_latency_s = 0.5e-6;
};

struct StarRun {
  JobResult result;
  double build_s = 0.0;   // wall time: engine and platform
  double replay_s = 0.0;  // wall time: the job's simulation
};

// Creates this process's engine (ideal network), builds the star of `nodes` x `gpus_per_node`
// and replays `spec` (its nodes and gpus_per_node are set here) on all of it. Once per process.
StarRun replay_on_star_platform(int nodes, int gpus_per_node, JobSpec spec,
                                const StarLinks& links = {});

}  // namespace scalecast::sim
