// One iteration of the default scenario (Summit, ResNet-50 v1.5 fp16, batch 256, Horovod
// hierarchical all-reduce, 64 MB fusion, 5 ms cycle) at a given node count and fidelity, in this
// process: load the platform, build it, build and price the training step, replay, report.
// Ops are priced by a datasheet roofline written here (60% of the tensor-core peak, 80% of HBM
// bandwidth, 5 us launch) so the benchmark measures the engine, independent of calibration data.
// Usage: bench_replay_summit NODES [flow|wave] [memory|nvme|pfs]   (run from the repository root)
// NODES above 4,608 grows Summit by its fat-tree rule (scenario cluster.nodes: fit), e.g. 16,667
// nodes = 100,002 GPUs.
// A storage source reads 110 KB per sample (ImageNet JPEGs, scenarios/summit-resnet50-gpfs.yaml).

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_environment.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_runner.hpp"

using namespace scalecast;

namespace {

class RooflineCost : public calibration::CostModel {
 public:
  calibration::OpCost op_time(const models::Op& op, const platforms::GpuSpec& gpu) const override {
    const double peak = gpu.peak_flops(op.dtype, op.tensor_core);
    const double compute = peak > 0.0 ? op.flops / (0.6 * peak) : 0.0;
    const double memory = (op.bytes_read + op.bytes_written) / (0.8 * gpu.memory_bandwidth);
    return {5e-6 + std::max(compute, memory), calibration::CostTier::kDatasheet};
  }
};

}  // namespace

int main(int argc, char** argv) {
  scalecast::bench::note_heap_setting(argv[0]);
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 64;
  const std::string fidelity = argc > 2 ? argv[2] : "wave";
  const std::string source = argc > 3 ? argv[3] : "memory";
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> sets = {"fidelity=" + fidelity, "iterations=1", "warmup=0"};
  if (source != "memory")
    sets.insert(sets.end(), {"input.source=" + source, "input.stored_sample_size=110KB"});
  const sim::Scenario s =
      sim::load_scenario("scenarios/summit-resnet50.yaml", sim::parse_overrides(sets));
  const RooflineCost cost;
  const sim::JobResult r = sim::run_point(s, {nodes, 0}, cost);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "summit resnet50 %d nodes (%d GPUs) %s %s: iteration %.4f s, %.0f samples/s, %.1f "
      "buckets, exposed comm %.4f s, io stall %.4f s | wall %.2f s, peak RSS %.0f MB\n",
      nodes, r.gpus, std::string(sim::to_string(r.fidelity)).c_str(), source.c_str(),
      r.iteration_time_s, r.throughput_samples_per_s, r.buckets_per_iteration,
      r.breakdown.exposed_comm_s, r.breakdown.io_stall_s, wall, ru.ru_maxrss / 1024.0);
  std::fflush(nullptr);
  std::_Exit(0);  // as the scalecast CLI: no engine teardown (sim/engine_setup.hpp)
}
