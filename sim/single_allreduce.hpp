#pragma once
// One all-reduce of one buffer on the first nodes of a platform, as the replay engine simulates
// a bucket, with no compute (one op of zero time produces the one gradient, so the iteration is
// the all-reduce) and no NCCL tuning model: the engine's cost of the flows alone
// (bench_allreduce, issue 18).

#include <string>

#include "sim/job.hpp"

namespace scalecast::sim {

struct SingleAllReduce {
  std::string platform = "summit";  // platform name or file
  int nodes = 1;
  int gpus_per_node = 6;
  double bytes = 64.0 * 1024 * 1024;
  Algorithm algorithm = Algorithm::kHierarchical;
  Fidelity fidelity = Fidelity::kFlow;
};

struct SingleAllReduceRun {
  JobResult result;
  double setup_s = 0.0;  // wall time: platform load, engine, build and job set-up
};

// Creates this process's engine (calibrated network), builds `nodes` nodes of the platform and
// replays the all-reduce. Once per process; the engine is kept until the process exits
// (keep_engine_until_exit).
SingleAllReduceRun replay_single_allreduce(const SingleAllReduce& spec);

}  // namespace scalecast::sim
