// One iteration of an LLM scenario (the pipeline job) in this process: load the scenario, build
// the platform, build and price every chunk, replay, report the simulated figures and the wall
// time and peak memory. Ops are priced by the same datasheet roofline as bench_replay_summit (60%
// of the tensor-core peak, 80% of HBM bandwidth, 5 us launch), so the benchmark measures the
// engine, independent of calibration data.
// Usage (from the repository root): bench_llm SCENARIO.yaml [KEY=VALUE ...]   (--set overrides)

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_environment.hpp"
#include "common/config_error.hpp"
#include "sim/llm_runner.hpp"
#include "sim/scenario.hpp"

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

int run(int argc, char** argv);

int main(int argc, char** argv) {
  scalecast::bench::note_heap_setting(argv[0]);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_llm: %s\n", e.what());
    return 1;
  }
}

int run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_llm SCENARIO.yaml [key=value ...]\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> sets = {"iterations=1", "warmup=0"};
  for (int i = 2; i < argc; ++i) sets.emplace_back(argv[i]);
  const sim::Scenario s = sim::load_scenario(argv[1], sim::parse_overrides(sets));
  const RooflineCost cost;
  const sim::LlmPointResult r = sim::run_llm_point(s, {s.nodes.front(), 0}, cost);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const auto& p = r.parallel;
  std::printf(
      "%s %d GPUs (TP %d PP %d CP %d DP %d, v %d, %lld micro-batches): iteration %.3f s, %.0f "
      "tokens/s, MFU %.1f%%, bubble %.3f s | wall %.2f s, peak RSS %.0f MB\n",
      r.model.c_str(), r.gpus, p.tp, p.pp, p.cp, p.dp, p.virtual_stages,
      static_cast<long long>(p.micro_batches()), r.pipeline.iteration_time_s, r.tokens_per_s(),
      100.0 * r.mfu(), r.pipeline.stages[static_cast<std::size_t>(r.bottleneck_stage)].bubble_s,
      wall, ru.ru_maxrss / 1024.0);
  return 0;
}
