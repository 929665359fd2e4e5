// How long building one training-step graph takes (target: ResNet-152 at batch 256 under 50 ms,
// issue "Models"). The model is built from the zoo once; each iteration runs shape inference,
// op generation, gradient bookkeeping and the Boost graph, as the replay engine would per run.
#include <benchmark/benchmark.h>

#include "models/training_step.hpp"
#include "models/zoo.hpp"

namespace {

using scalecast::common::Precision;
using scalecast::models::build_training_step;
using scalecast::models::StepOptions;
using scalecast::models::zoo_model;

void build_step(benchmark::State& state, const char* name, std::int64_t batch, Precision p) {
  const auto model = zoo_model(name);
  StepOptions o;
  o.batch = batch;
  o.precision = p;
  std::size_t ops = 0;
  for (auto _ : state) {
    auto step = build_training_step(model, o);
    ops = step.ops().size();
    benchmark::DoNotOptimize(step);
  }
  state.counters["ops"] = static_cast<double>(ops);
}

void zoo_and_step(benchmark::State& state, const char* name, std::int64_t batch) {
  StepOptions o;
  o.batch = batch;
  for (auto _ : state) {
    auto step = build_training_step(zoo_model(name), o);
    benchmark::DoNotOptimize(step);
  }
}

}  // namespace

BENCHMARK_CAPTURE(build_step, resnet152_b256_fp16, "resnet152", 256, Precision::kFp16Mixed)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(zoo_and_step, resnet152_b256_from_zoo, "resnet152", 256)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(build_step, resnet50_b256_fp32, "resnet50", 256, Precision::kFp32)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(build_step, bert_large_b32_fp16, "bert_large_pretrain", 32, Precision::kFp16Mixed)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(build_step, gpt2_xl_b8_bf16, "gpt2_xl", 8, Precision::kBf16Mixed)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
