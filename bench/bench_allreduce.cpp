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
#include <string>

#include "bench/bench_environment.hpp"
#include "sim/single_allreduce.hpp"

using namespace scalecast;

int main(int argc, char** argv) {
  scalecast::bench::note_heap_setting(argv[0]);
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
  sim::SingleAllReduce spec;
  spec.nodes = (gpus + kGpusPerNode / 2) / kGpusPerNode;
  spec.gpus_per_node = kGpusPerNode;
  spec.bytes = mib * 1024 * 1024;
  spec.algorithm = algorithm == "ring" ? sim::Algorithm::kRing : sim::Algorithm::kHierarchical;
  spec.fidelity = fidelity == "flow" ? sim::Fidelity::kFlow : sim::Fidelity::kWave;
  const auto t0 = std::chrono::steady_clock::now();
  const sim::SingleAllReduceRun run = sim::replay_single_allreduce(spec);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "%.0f MiB %s all-reduce, %d GPUs (%d nodes) %s: %.6f s simulated | setup %.2f s, wall "
      "%.2f s, peak RSS %.0f MB\n",
      mib, algorithm.c_str(), run.result.gpus, spec.nodes, fidelity.c_str(),
      run.result.iteration_time_s, run.setup_s, wall, ru.ru_maxrss / 1024.0);
  std::fflush(nullptr);
  std::_Exit(0);  // as the scalecast CLI: no engine teardown (sim/engine_setup.hpp)
}
