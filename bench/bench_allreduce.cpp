// One all-reduce of one buffer on Summit-like nodes (6 V100 per node, two EDR NICs, the
// platform's fat tree, calibrated network), as the replay engine simulates a bucket: the
// Horovod hierarchical pattern (NCCL reduce-scatter in the node, ring across nodes per local
// GPU, all-gather in the node) or the flat ring over all GPUs, at `flow` (every step of every
// rank) or `wave` fidelity. No compute: one op of zero time produces the one gradient, so the
// iteration is the all-reduce. The pattern alone (no NCCL tuning model), so the figure is the
// engine's cost of the flows (issue 18: 64 MiB at 512 to 8,192 GPUs).
// Usage: bench_allreduce GPUS [flow|wave] [hierarchical|ring] [MiB]   (from the repository root)
// The job takes the whole nodes nearest to GPUS (512 -> 85 nodes = 510 GPUs, 8,192 -> 1,365 nodes =
// 8,190 GPUs); the line printed gives the real count.

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <simgrid/s4u.hpp>
#include <string>

#include "platforms/platform.hpp"
#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "sim/platform_builder.hpp"

using namespace scalecast;

int main(int argc, char** argv) {
  const int gpus = argc > 1 ? std::atoi(argv[1]) : 512;
  const std::string fidelity = argc > 2 ? argv[2] : "flow";
  const std::string algorithm = argc > 3 ? argv[3] : "hierarchical";
  const double mib = argc > 4 ? std::atof(argv[4]) : 64.0;
  constexpr int kGpusPerNode = 6;
  if (gpus < kGpusPerNode || mib <= 0.0 || (fidelity != "flow" && fidelity != "wave") ||
      (algorithm != "hierarchical" && algorithm != "ring")) {
    std::fprintf(stderr,
                 "usage: bench_allreduce GPUS(>= 6) [flow|wave] [hierarchical|ring] "
                 "[MiB > 0]\n");
    return 1;
  }
  const int nodes = (gpus + kGpusPerNode / 2) / kGpusPerNode;
  const auto t0 = std::chrono::steady_clock::now();
  const platforms::Platform machine = platforms::load_platform("summit");
  auto engine = sim::create_engine({sim::NetworkMode::kCalibrated});
  sim::BuildOptions options;
  options.nodes = nodes;
  options.network = sim::NetworkMode::kCalibrated;
  auto platform = sim::build_platform(*engine, machine, options);

  sim::JobSpec spec;
  spec.name = "allreduce";
  for (int n = 0; n < nodes; ++n) spec.nodes.push_back(n);
  spec.gpus_per_node = kGpusPerNode;
  spec.program.ops.push_back({"produce", sim::Stream::kCompute, 0.0, "exact", {}, false});
  spec.program.gradients.push_back({"buffer", mib * 1024 * 1024, 0});
  spec.allreduce.nccl_tuner = false;
  spec.allreduce.algorithm =
      algorithm == "ring" ? sim::Algorithm::kRing : sim::Algorithm::kHierarchical;
  spec.allreduce.fusion_bytes = mib * 1024 * 1024;
  spec.allreduce.cycle_time_s = 0.0;
  spec.fidelity = fidelity == "flow" ? sim::Fidelity::kFlow : sim::Fidelity::kWave;
  spec.prefetch = true;
  spec.warmup = 0;
  spec.iterations = 1;
  for (int g = 0; g < kGpusPerNode; ++g) spec.nic_groups.push_back(platform->nic_of_gpu(0, g));
  sim::Job job(*platform, spec);
  const double setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  engine->run();
  const sim::JobResult r = job.result();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "%.0f MiB %s all-reduce, %d GPUs (%d nodes) %s: %.6f s simulated | setup %.2f s, wall "
      "%.2f s, peak RSS %.0f MB\n",
      mib, algorithm.c_str(), r.gpus, nodes, fidelity.c_str(), r.iteration_time_s, setup, wall,
      ru.ru_maxrss / 1024.0);
  std::fflush(nullptr);
  std::_Exit(0);  // as the scalecast CLI: no engine teardown (sim/engine_setup.hpp)
}
