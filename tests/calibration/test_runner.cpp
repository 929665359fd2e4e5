#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "calibration/calibrated_cost_model.hpp"
#include "calibration/calibration_runner.hpp"
#include "calibration/coverage.hpp"
#include "models/llm_step.hpp"
#include "models/training_step.hpp"
#include "models/transformer.hpp"
#include "models/zoo.hpp"
#include "resnet50_ops.hpp"

using namespace scalecast::calibration;
namespace fs = std::filesystem;

namespace {

scalecast::kernels::TimingOptions quick_timing() {
  scalecast::kernels::TimingOptions t;
  t.min_sample_s = 2e-4;
  t.min_samples = 3;
  t.max_total_s = 0.2;
  return t;
}

// The conv and GEMM ops of the zoo's ResNet-50 training step.
std::vector<scalecast::models::Op> zoo_resnet50_conv_gemm(std::int64_t batch) {
  scalecast::models::StepOptions so;
  so.batch = batch;
  const auto step =
      scalecast::models::build_training_step(scalecast::models::zoo_model("resnet50"), so);
  std::vector<scalecast::models::Op> out;
  for (const auto& op : step.ops())
    if (op.op_class == scalecast::models::OpClass::kConv ||
        op.op_class == scalecast::models::OpClass::kGemm)
      out.push_back(op);
  return out;
}

// A backend with scripted timings: call k of the run reports median (k + 1) ms and min k ms
// (k + 0.5 for the first call), and the calls are logged by request size.
class ScriptedBackend : public scalecast::kernels::KernelBackend {
 public:
  scalecast::kernels::DeviceInfo device_info() const override {
    scalecast::kernels::DeviceInfo d;
    d.backend = "cpu";
    d.key = "cpu-host";
    return d;
  }
  std::string unsupported_reason(const scalecast::kernels::KernelRequest&) const override {
    return "";
  }
  std::vector<scalecast::kernels::KernelResult> measure(
      const scalecast::kernels::KernelRequest& r) override {
    scalecast::kernels::KernelResult res;
    const double k = static_cast<double>(calls.size());
    res.timing.median_s = (k + 1) * 1e-3;
    res.timing.min_s = (k == 0 ? 0.5 : k) * 1e-3;
    res.timing.mean_s = res.timing.median_s;
    res.timing.samples = 5;
    res.timing.reps_per_sample = 1;
    calls.push_back(r.elements);
    return {res};
  }
  std::vector<std::int64_t> calls;
};

std::string temp_path(const std::string& name) {
  const fs::path dir = fs::path(SCALECAST_BINARY_DIR) / "test-tmp";
  fs::create_directories(dir);
  fs::remove(dir / name);
  return (dir / name).string();
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("tiny cpu sweep writes a database that round-trips") {
    auto cpu = scalecast::kernels::make_cpu_backend(quick_timing());
    const auto jobs =
        sweep_jobs("cpu-host", "cpu", {scalecast::common::DType::kFp32}, SweepSize::kTiny);
    Database db;
    RunnerOptions o;
    o.out_path = temp_path("tiny.yaml");
    o.show_progress = false;
    o.command = "test";
    const RunReport r = run_calibration(*cpu, jobs, o, db);
    MESSAGE(r.measured << " measured from " << jobs.size() << " jobs");
    CHECK(r.measured == static_cast<int>(jobs.size()));
    CHECK(r.unsupported == 0);
    const Database back = load_database(o.out_path);
    CHECK(back == db);
    CHECK(to_yaml(back) == to_yaml(db));
    const Source& src = back.sources().begin()->second;
    CHECK(src.backend == "cpu");
    CHECK(src.libraries.count("eigen") == 1);
    CHECK(src.command == "test");
    // The measured CPU rows price ops exactly, and the summary lists them.
    const std::string summary = describe_database(back);
    CHECK(summary.find("cpu-host     fp32      conv           fwd              2  [fixed]") !=
          std::string::npos);
  }

  TEST_CASE("an interrupted run keeps its measurements and resumes where it stopped") {
    auto cpu = scalecast::kernels::make_cpu_backend(quick_timing());
    const auto jobs =
        sweep_jobs("cpu-host", "cpu", {scalecast::common::DType::kFp32}, SweepSize::kTiny);
    RunnerOptions o;
    o.out_path = temp_path("resume.yaml");
    o.show_progress = false;
    int polls = 0;
    o.should_stop = [&] { return ++polls > 5; };  // "Ctrl-C" after five jobs
    o.date = "2026-01-01T00:00:00Z";
    Database first;
    const RunReport r1 = run_calibration(*cpu, jobs, o, first);
    CHECK(r1.interrupted);
    CHECK(r1.measured == 5);
    Database reloaded = load_database(o.out_path);
    CHECK(reloaded.size() == 5);
    o.should_stop = nullptr;
    o.date = "2026-01-01T00:05:00Z";
    const RunReport r2 = run_calibration(*cpu, jobs, o, reloaded);
    CHECK_FALSE(r2.interrupted);
    CHECK(r2.already_present == 5);
    CHECK(r2.measured == static_cast<int>(jobs.size()) - 5);
    CHECK(load_database(o.out_path).size() == jobs.size());
    CHECK(load_database(o.out_path).sources().size() == 2);  // one provenance record per run
  }

  TEST_CASE("rounds measure every job round-robin and store the median of the rounds") {
    std::vector<CalibrationJob> jobs;
    for (std::int64_t e : {100, 200}) {
      MeasurementKey k{"cpu-host", "elementwise",    "fwd", scalecast::common::DType::kFp32, false,
                       "",         {{"elements", e}}};
      jobs.push_back({k, request_for(k), 0.0});
    }
    ScriptedBackend backend;
    RunnerOptions o;
    o.show_progress = false;
    o.rounds = 3;
    Database db;
    const RunReport r = run_calibration(backend, jobs, o, db);
    CHECK(r.measured == 2);
    // Calls 0..5 alternate between the jobs.
    CHECK(backend.calls == std::vector<std::int64_t>{100, 200, 100, 200, 100, 200});
    REQUIRE(db.measurements().size() == 2);
    for (const Measurement* m : db.measurements()) {
      const bool first = m->key.dim("elements") == 100;
      // Job 100: rounds' medians 1, 3, 5 ms -> 3 ms, mins 0.5, 2, 4 -> 0.5 ms; job 200: 2, 4, 6.
      CHECK(m->median_s == doctest::Approx(first ? 3e-3 : 4e-3));
      CHECK(m->min_s == doctest::Approx(first ? 0.5e-3 : 1e-3));
      CHECK(m->samples == 15);
    }
    o.rounds = 0;
    CHECK_THROWS_WITH(run_calibration(backend, jobs, o, db),
                      "calibration: rounds must be >= 1, got 0");
  }

  TEST_CASE("model ops are deduplicated by measurement key") {
    const auto ops = testing::resnet50_conv_gemm_ops(2);
    const auto jobs = jobs_for_ops(ops, "cpu-host");
    MESSAGE(ops.size() << " ResNet-50 conv/GEMM ops, " << jobs.size() << " distinct kernels");
    CHECK(ops.size() == 53 * 3 - 1 + 3);
    // 23 distinct conv geometries (stem; 4 in layer1, where conv3 and the downsample agree;
    // 6 in each later stage) × 3 passes, the stem without bwd_data, plus 3 fc GEMMs.
    CHECK(jobs.size() == 23 * 3 - 1 + 3);
    // The models layer's ResNet-50 has the same distinct conv kernels.
    std::set<MeasurementKey> mine, zoo;
    for (const auto& j : jobs)
      if (j.key.op == "conv") mine.insert(j.key);
    for (const auto& j : jobs_for_ops(zoo_resnet50_conv_gemm(2), "cpu-host"))
      if (j.key.op == "conv") zoo.insert(j.key);
    CHECK(zoo.size() == mine.size());
    CHECK(zoo == mine);
  }
}

TEST_SUITE("unit") {
  // Calibrating one GPU's shard of an LLM (`calibrate --models llama3_70b --tp 8`) must price a
  // whole 3-D parallel job of that model from measurements: every compute op of every chunk,
  // whatever its PP, virtual stages, DP and recomputation, exactly; the optimizer step, whose
  // size is the chunk's parameters, from the measured optimizer rows (never the datasheet).
  TEST_CASE("an LLM shard's calibration prices every op of its 3-D parallel job exactly") {
    namespace m = scalecast::models;
    const auto spec = m::find_transformer("llama3_70b");
    REQUIRE(spec);
    const auto ops = llm_calibration_ops(*spec, 8, 1, 8192, m::LlmPrecision::kBf16);
    const auto jobs = jobs_for_ops(ops, "cpu-host");
    MESSAGE(ops.size() << " ops, " << jobs.size() << " distinct kernels");
    CHECK(jobs.size() < 64);  // one layer's shapes, the embedding, the loss and the optimizer
    // The optimizer sizes rise to the whole shard, measured last (it may not fit a device).
    std::vector<std::int64_t> opt_sizes;
    for (const auto& op : ops)
      if (op.op_class == m::OpClass::kOptimizer) opt_sizes.push_back(op.elements);
    REQUIRE(opt_sizes.size() > 2);
    CHECK(std::is_sorted(opt_sizes.begin(), opt_sizes.end()));
    CHECK(opt_sizes.front() >= 262144);
    CHECK(opt_sizes.back() > 4 * opt_sizes[opt_sizes.size() - 2] - 4);
    CHECK(ops.back().op_class == m::OpClass::kOptimizer);
    ScriptedBackend backend;
    Database db;
    RunnerOptions o;
    o.show_progress = false;
    run_calibration(backend, jobs, o, db);
    const CalibratedCostModel model(db);
    scalecast::platforms::GpuSpec host;
    host.name = "cpu-host";
    host.memory_bandwidth = 1e11;  // the datasheet tier's input: must not be what prices an op
    // The NeMo recipe of scenarios/llama3-70b-dgx-h100-superpod.yaml.
    m::ParallelConfig pc;
    pc.tp = 8, pc.pp = 4, pc.virtual_stages = 5, pc.dp = 16;
    pc.micro_batch = 1, pc.global_batch = 256, pc.seq_len = 8192;
    pc.schedule = m::PipelineSchedule::kInterleaved1F1B;
    pc.sequence_parallel = true;
    pc.recompute = m::Recompute::kSelective;
    pc.zero_stage = 1;
    m::check_parallel(pc, *spec, 512);
    int priced = 0, exact = 0;
    for (const auto& chunk : m::build_llm_step(*spec, pc)) {
      for (const auto* segs : {&chunk.forward, &chunk.backward})
        for (const auto& seg : *segs)
          for (const auto& op : seg.ops) {
            ++priced;
            if (model.op_time(op, host).tier == CostTier::kExact)
              ++exact;
            else
              FAIL_CHECK("not measured: " << op.name);
          }
      for (const auto& op : chunk.optimizer_ops)
        CHECK_MESSAGE(model.op_time(op, host).tier != CostTier::kDatasheet, op.name);
    }
    CHECK(priced > 1000);
    CHECK(exact == priced);
    // The shard is what is measured: TP 1's shapes leave the TP 8 GEMMs unmeasured.
    const auto tp1 =
        jobs_for_ops(llm_calibration_ops(*spec, 1, 1, 8192, m::LlmPrecision::kBf16), "cpu-host");
    std::set<MeasurementKey> k8, k1;
    for (const auto& j : jobs) k8.insert(j.key);
    for (const auto& j : tp1) k1.insert(j.key);
    CHECK(k8 != k1);
    // A split the model cannot take is refused, naming the heads.
    CHECK_THROWS_WITH_AS(llm_calibration_ops(*spec, 3, 1, 8192, m::LlmPrecision::kBf16),
                         doctest::Contains("does not divide the 64 attention heads"),
                         std::invalid_argument);
  }
}

TEST_SUITE("slow") {
  TEST_CASE("cpu backend calibrates ResNet-50 conv and GEMM shapes at batch 2") {
    auto cpu = scalecast::kernels::make_cpu_backend(quick_timing());
    const auto ops = zoo_resnet50_conv_gemm(2);
    const auto jobs = jobs_for_ops(ops, "cpu-host");
    MESSAGE("zoo ResNet-50 batch 2: " << ops.size() << " conv/GEMM ops, " << jobs.size()
                                      << " distinct kernels");
    Database db;
    RunnerOptions o;
    o.out_path = temp_path("resnet50-cpu.yaml");
    o.command = "test_calibration resnet50 batch 2";
    o.show_progress = false;
    const RunReport r = run_calibration(*cpu, jobs, o, db);
    CHECK(r.measured == static_cast<int>(jobs.size()));
    const Database back = load_database(o.out_path);
    CHECK(to_yaml(back) == to_yaml(db));
    // Every op of the model is now priced from an exact measurement on this machine.
    scalecast::platforms::GpuSpec host;
    host.name = "cpu-host";
    const CalibratedCostModel model(back);
    double total_s = 0, flops = 0;
    for (const auto& op : ops) {
      const OpCost c = model.op_time(op, host);
      CHECK(c.tier == CostTier::kExact);
      total_s += c.time_s;
      flops += key_flops(key_for(op, "cpu-host"));
    }
    MESSAGE("ResNet-50 conv+fc, batch 2, " << jobs.size() << " kernels: sum over ops " << total_s
                                           << " s, " << flops / total_s / 1e9 << " GFLOP/s");
    CHECK(flops / total_s > 1e8);  // a real CPU does more than 0.1 GFLOP/s
  }
}

TEST_SUITE("unit") {
  TEST_CASE("pooling jobs are never smaller than their window and measure on the CPU") {
    // The ResNet global average pool at batch 8: 8 x 2048 outputs, window 7 x 7, stride 7; the
    // max pool: 3 x 3 windows, stride 2. Rebuilt from the key alone (elements = outputs).
    const auto key = [](std::int64_t elements, std::int64_t r, std::int64_t stride) {
      MeasurementKey k{"cpu-host",
                       "pooling",
                       "fwd",
                       scalecast::common::DType::kFp32,
                       false,
                       "",
                       {{"elements", elements}, {"r", r}, {"s", r}, {"stride_h", stride}}};
      return k;
    };
    for (const auto& k : {key(8 * 2048, 7, 7), key(2048, 56, 56), key(8 * 64 * 56 * 56, 3, 2)}) {
      const scalecast::kernels::KernelRequest req = request_for(k);
      INFO(k.signature());
      CHECK(req.conv.h >= req.conv.r);
      CHECK(req.conv.w >= req.conv.s);
      const std::int64_t oh = (req.conv.h - req.conv.r) / req.conv.stride_h + 1;
      const std::int64_t ow = (req.conv.w - req.conv.s) / req.conv.stride_w + 1;
      const std::int64_t outputs = req.conv.n * req.conv.c * oh * ow;
      const std::int64_t inputs = req.conv.n * req.conv.c * req.conv.h * req.conv.w;
      MESSAGE(k.signature() << ": " << req.conv.c << " planes " << req.conv.h << "x" << req.conv.w
                            << " -> " << outputs << " outputs");
      const std::int64_t written = k.pass == "fwd" ? outputs : inputs;
      CHECK(written <= k.dim("elements"));
      CHECK(written * 2 > k.dim("elements"));  // within a factor 2 of the key's count
    }
    // The case of the audit: 2048 outputs of a 56 x 56 window used to become a 45 x 45 plane.
    auto cpu = scalecast::kernels::make_cpu_backend(quick_timing());
    CHECK(cpu->measure(request_for(key(2048, 56, 56))).size() == 1);
  }

  TEST_CASE("a kernel failure names the op being measured") {
    class Failing : public scalecast::kernels::KernelBackend {
     public:
      scalecast::kernels::DeviceInfo device_info() const override {
        scalecast::kernels::DeviceInfo d;
        d.backend = "cpu";
        d.key = "cpu-host";
        return d;
      }
      std::string unsupported_reason(const scalecast::kernels::KernelRequest&) const override {
        return "";
      }
      std::vector<scalecast::kernels::KernelResult> measure(
          const scalecast::kernels::KernelRequest&) override {
        throw std::invalid_argument("conv height: filter span 56 exceeds padded input 45");
      }
    } failing;
    MeasurementKey k{"cpu-host",
                     "pooling",
                     "fwd",
                     scalecast::common::DType::kFp32,
                     false,
                     "",
                     {{"elements", 2048}, {"r", 56}, {"s", 56}, {"stride_h", 56}}};
    const std::vector<CalibrationJob> jobs{{k, request_for(k), 0.0}};
    Database db;
    RunnerOptions o;
    o.show_progress = false;
    try {
      run_calibration(failing, jobs, o, db);
      FAIL("no error");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "calibrate: " + k.signature() +
                                         ": conv height: filter span 56 exceeds padded input 45");
    }
  }
}
