// Engine-only speed check on a synthetic star platform (no platform/model layers needed): N
// nodes x G GPUs, each GPU with a private link, each node one NIC link shared by its GPUs, a
// ResNet-50-sized step (161 gradient tensors, 51 MB fp16 in all, 100 ms backward).
// Usage: bench_replay_synthetic NODES [GPUS=6] [flow|wave] [FUSION_MB=64] [CYCLE_MS=0]

#include <fmt/format.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/star_platform.hpp"

using namespace scalecast::sim;

namespace {

StepProgram resnet_like() {
  StepProgram p;
  p.batch_per_gpu = 256;
  const int fwd = 160, bwd = 161 * 2;
  for (int i = 0; i < fwd + bwd; ++i) {
    ProgramOp op;
    op.name = fmt::format("op{}", i);
    op.duration_s = i < fwd ? 50e-3 / fwd : 100e-3 / bwd;
    if (i > 0) op.preds = {static_cast<std::size_t>(i - 1)};
    p.ops.push_back(op);
    if (i >= fwd && (i - fwd) % 2 == 1)
      p.gradients.push_back({fmt::format("g{}", i), 51.1e6 / 161, p.ops.size() - 1});
  }
  ProgramOp opt;
  opt.name = "optimizer";
  opt.duration_s = 3e-3;
  opt.optimizer = true;
  p.ops.push_back(opt);
  p.input_bytes = 256 * 150528.0;
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 64;
  const int gpus = argc > 2 ? std::atoi(argv[2]) : 6;
  const std::string fid = argc > 3 ? argv[3] : "wave";
  const double fusion_mb = argc > 4 ? std::atof(argv[4]) : 64.0;
  const double cycle_ms = argc > 5 ? std::atof(argv[5]) : 0.0;
  JobSpec spec;
  spec.program = resnet_like();
  spec.allreduce.algorithm = Algorithm::kHierarchical;
  spec.allreduce.fusion_bytes = fusion_mb * 1024 * 1024;
  spec.allreduce.cycle_time_s = cycle_ms * 1e-3;
  spec.fidelity = fid == "flow" ? Fidelity::kFlow : Fidelity::kWave;
  spec.iterations = 1;
  spec.symmetric = std::getenv("BENCH_NOSYM") == nullptr;
  spec.nic_groups.assign(gpus, 0);  // one NIC per node
  const StarRun run = replay_on_star_platform(nodes, gpus, spec);
  const JobResult& r = run.result;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "nodes %d gpus %d %s: iteration %.4f s, buckets %.0f, exposed %.4f s | build %.2f s, "
      "replay %.2f s, peak RSS %.0f MB\n",
      nodes, nodes * gpus, fid.c_str(), r.iteration_time_s, r.buckets_per_iteration,
      r.breakdown.exposed_comm_s, run.build_s, run.replay_s, ru.ru_maxrss / 1024.0);
  return 0;
}
