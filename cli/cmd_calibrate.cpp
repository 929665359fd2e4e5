// `scalecast calibrate`: measure real kernels and write a calibration database.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/calibration_runner.hpp"
#include "calibration/deepbench_import.hpp"
#include "cli/commands.hpp"
#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "common/precision.hpp"
#include "kernels/cpu_affinity.hpp"
#include "kernels/kernel_backend.hpp"
#include "models/training_step.hpp"
#include "models/transformer.hpp"
#include "models/zoo.hpp"
#include "platforms/data_dir.hpp"
#include "platforms/gpu_catalog.hpp"

namespace scalecast::cli {
namespace {

constexpr int kMaxCalibrationBatch = 65'536;

struct CalibrateOptions {
  std::string backend = "cpu";
  std::vector<std::string> models;
  std::vector<int> batches{32};
  std::vector<int> tps{1};  // LLM zoo models: tensor-parallel degrees whose shards are measured
  std::vector<int> seq_lens{0};  // transformers: sequence lengths (0 = the model's default)
  std::vector<std::string> precisions{"fp32"};
  bool sweep = false;
  std::string sweep_size = "full";
  std::string out;
  std::string device_key;
  std::string import_deepbench;
  std::string deepbench_dir;  // "": calibration/data/deepbench in the data directories
  double min_sample_s = 1e-3;
  int cpu = -1;                // -1: not pinned
  std::string clock = "wall";  // or "thread": the measuring thread's CPU clock
};

std::atomic<bool> g_stop{false};
extern "C" void on_sigint(int) { g_stop.store(true); }

// Each training precision computes its matrix ops in one dtype (common/precision.hpp).
common::DType dtype_of(const std::string& text) {
  const auto p = common::parse_precision(text);
  if (!p)
    throw common::ConfigError("command line", 0, 0, "--precision",
                              fmt::format("expected fp32, tf32, fp16 or bf16, got \"{}\"", text));
  switch (*p) {
    case common::Precision::kFp32:
      return common::DType::kFp32;
    case common::Precision::kTf32:
      return common::DType::kTf32;
    case common::Precision::kFp16Mixed:
      return common::DType::kFp16;
    case common::Precision::kBf16Mixed:
      return common::DType::kBf16;
  }
  return common::DType::kFp32;
}

// One GPU's ops of an LLM zoo transformer (calibration::llm_calibration_ops), errors at the
// command-line option that caused them.
std::vector<models::Op> llm_ops(const models::TransformerSpec& spec, int tp, int micro_batch,
                                int seq_len, const std::string& precision) {
  models::LlmPrecision p = models::LlmPrecision::kBf16;
  if (precision == "fp16")
    p = models::LlmPrecision::kFp16;
  else if (precision != "bf16")
    throw common::ConfigError("command line", 0, 0, "--precision",
                              fmt::format("'{}' (an LLM of the zoo) trains in bf16 or fp16, not {}",
                                          spec.name, precision));
  try {
    return calibration::llm_calibration_ops(spec, tp, micro_batch, seq_len, p);
  } catch (const std::invalid_argument& e) {
    throw common::ConfigError(
        "command line", 0, 0, "--tp, --seq-len",
        fmt::format("tp {}, sequence {} for '{}': {}", tp, seq_len, spec.name, e.what()));
  }
}

std::string command_line(const CalibrateOptions& o) {
  std::string c = fmt::format("scalecast calibrate --backend {}", o.backend);
  if (!o.models.empty())
    c +=
        fmt::format(" --models {} --batch {}", fmt::join(o.models, ","), fmt::join(o.batches, ","));
  if (o.tps != std::vector<int>{1}) c += fmt::format(" --tp {}", fmt::join(o.tps, ","));
  if (o.seq_lens != std::vector<int>{0})
    c += fmt::format(" --seq-len {}", fmt::join(o.seq_lens, ","));
  if (o.sweep) c += " --sweep --sweep-size " + o.sweep_size;
  c += " --precision " + fmt::format("{}", fmt::join(o.precisions, ","));
  if (o.cpu >= 0) c += fmt::format(" --cpu {}", o.cpu);
  if (o.clock != "wall") c += " --clock " + o.clock;
  return c + " --out " + o.out;
}

int run_import(const CalibrateOptions& o) {
  try {
    calibration::require_deepbench_device(o.import_deepbench);
  } catch (const std::invalid_argument& e) {
    throw common::ConfigError("command line", 0, 0, "--import-deepbench", e.what());
  }
  const std::string tag = o.import_deepbench.substr(0, o.import_deepbench.find('-'));
  const std::string conv = "deepbench-" + tag + "-conv.csv";
  const std::string gemm = "deepbench-" + tag + "-gemm.csv";
  // The committed tables are found from any working directory, as platforms and databases are
  // (platforms/data_dir.hpp); a folder given is taken as it is.
  std::string dir = o.deepbench_dir;
  if (dir.empty()) {
    const std::string found = platforms::find_data_file("calibration/data/deepbench/" + conv);
    if (found.empty())
      throw common::ConfigError(
          "command line", 0, 0, "--deepbench-dir",
          fmt::format("calibration/data/deepbench/{} is not in the data directories ({}); give "
                      "the folder of the DeepBench CSVs with --deepbench-dir",
                      conv, fmt::join(platforms::data_dirs(), ", ")));
    dir = std::filesystem::path(found).parent_path().string();
  }
  for (const std::string& file : {conv, gemm})
    if (!std::filesystem::is_regular_file(std::filesystem::path(dir) / file))
      throw common::ConfigError(
          "command line", 0, 0, "--deepbench-dir",
          fmt::format("no DeepBench table {} in {} (the folder needs {} and {})", file, dir, conv,
                      gemm));
  calibration::Database db = calibration::import_deepbench(
      o.import_deepbench, (std::filesystem::path(dir) / conv).string(),
      (std::filesystem::path(dir) / gemm).string());
  if (std::filesystem::exists(o.out)) {
    calibration::Database existing = calibration::load_database(o.out);
    const auto r = existing.merge(db);
    db = existing;
    fmt::print("merged into {}: {} added, {} replaced, {} kept\n", o.out, r.added, r.replaced,
               r.kept);
  }
  calibration::save_database(db, o.out);
  fmt::print("imported DeepBench {}: {} measurements -> {}\n", o.import_deepbench, db.size(),
             o.out);
  return kExitOk;
}

// A timed sample shorter than 1 us is below the clocks' resolution; one longer than 10 s makes a
// calibration of a hundred kernels take hours (5 samples each at least).
constexpr double kMinSample_s = 1e-6;
constexpr double kMaxSample_s = 10.0;

// --device-key: measurements recorded under a key no platform prices from are lost. A catalog GPU
// that takes its measurements from another (calibration_key, platforms/gpus.yaml) is an error; a
// key outside the default catalog is a warning (a platform's own catalog may define it).
void check_device_key(const std::string& key) {
  const std::string path = platforms::find_data_file("platforms/gpus.yaml");
  if (path.empty()) return;
  const platforms::GpuCatalog catalog = platforms::GpuCatalog::load_file(path);
  if (!catalog.contains(key)) {
    spdlog::warn(
        "calibrate: --device-key {} is not a GPU of the default catalog ({}): only a platform "
        "whose own catalog has a GPU '{}' will use these measurements",
        key, fmt::join(catalog.keys(), ", "), key);
    return;
  }
  const platforms::GpuSpec& gpu = catalog.at(key);
  if (!gpu.calibration_key.empty())
    throw common::ConfigError(
        "command line", 0, 0, "--device-key",
        fmt::format("{} takes its measurements from {} (calibration_key in platforms/gpus.yaml: "
                    "the same silicon, clocks and memory bandwidth); record them under {}",
                    key, gpu.calibration_key, gpu.calibration_key));
}

int run_calibrate(const CalibrateOptions& o) {
  if (!o.import_deepbench.empty()) return run_import(o);
  if (o.models.empty() == !o.sweep)
    throw common::ConfigError("command line", 0, 0, "calibrate",
                              "give either --models NAME[,NAME...] or --sweep");
  std::vector<common::DType> dtypes;
  for (const auto& p : o.precisions) dtypes.push_back(dtype_of(p));
  // A real kernel is run at each batch: 2^31-1 stopped in std::bad_alloc (exit 4) after the run
  // started. 65,536 samples per GPU is beyond any training batch per device.
  for (int b : o.batches)
    if (b < 1 || b > kMaxCalibrationBatch)
      throw common::ConfigError("command line", 0, 0, "--batch",
                                fmt::format("expected a batch size from 1 to {}, got {}",
                                            common::format_count(kMaxCalibrationBatch), b));
  for (int t : o.tps)
    if (t < 1 || t > 1024)
      throw common::ConfigError(
          "command line", 0, 0, "--tp",
          fmt::format("expected a tensor-parallel degree 1..1024, got {}", t));
  for (int q : o.seq_lens)
    if (q < 0 || q > 1048576)
      throw common::ConfigError(
          "command line", 0, 0, "--seq-len",
          fmt::format("expected 0 (the model's default) or a length 1..1048576, got {}", q));
  if (!(o.min_sample_s >= kMinSample_s && o.min_sample_s <= kMaxSample_s))
    throw common::ConfigError(
        "command line", 0, 0, "--min-sample-time",
        fmt::format("expected seconds from {:g} to {:g} per timed sample, got {}", kMinSample_s,
                    kMaxSample_s, o.min_sample_s));
  if (!o.device_key.empty()) check_device_key(o.device_key);
  if (o.backend != "cpu" && o.cpu >= 0)
    throw common::ConfigError(
        "command line", 0, 0, "--cpu",
        "pins the CPU backend's measuring thread; not for --backend " + o.backend);
  if (o.backend != "cpu" && o.clock != "wall")
    throw common::ConfigError("command line", 0, 0, "--clock",
                              "the thread CPU clock times CPU kernels; --backend " + o.backend +
                                  " times with device events");
  // The models, resolved before the backend starts (a GPU backend takes seconds to come up): an
  // unknown name, or an option the model cannot take, is an error at its option.
  struct Resolved {
    std::optional<models::TransformerSpec> llm;  // an LLM zoo transformer
    std::optional<models::Model> graph;          // otherwise a layer graph
  };
  std::vector<Resolved> resolved;
  for (const auto& name : o.models) {
    Resolved r{models::find_transformer(name), std::nullopt};
    if (!r.llm) {
      try {
        r.graph = models::load_model(name);
      } catch (const std::invalid_argument& e) {
        throw common::ConfigError("command line", 0, 0, "--models", e.what());
      }
      if (o.tps != std::vector<int>{1})
        throw common::ConfigError(
            "command line", 0, 0, "--tp",
            fmt::format("for the LLM zoo's transformers (one GPU's tensor-parallel shard); {} is "
                        "measured whole, give it without --tp",
                        name));
      if (!r.graph->input.tokens && o.seq_lens != std::vector<int>{0})
        throw common::ConfigError(
            "command line", 0, 0, "--seq-len",
            fmt::format("for models whose input is token sequences; {} takes images", name));
    }
    resolved.push_back(std::move(r));
  }
  // One core for the whole calibration (kernels/cpu_affinity.hpp says why).
  std::optional<kernels::CpuPin> pin;
  if (o.cpu >= 0) {
    const std::vector<int> allowed = kernels::allowed_cpus();
    if (std::find(allowed.begin(), allowed.end(), o.cpu) == allowed.end())
      throw common::ConfigError("command line", 0, 0, "--cpu",
                                fmt::format("expected a CPU this process may run on ({}), got {}",
                                            fmt::join(allowed, ", "), o.cpu));
    pin.emplace(o.cpu);
  }
  kernels::TimingOptions timing;
  timing.min_sample_s = o.min_sample_s;
  timing.cpu_thread_clock = o.clock == "thread";
  std::unique_ptr<kernels::KernelBackend> backend;
  if (o.backend == "cuda") {
    kernels::CudaOptions co;
    co.timing = timing;
    backend = kernels::make_cuda_backend(co);
  } else {
    backend = kernels::make_cpu_backend(timing);
  }
  const std::string device = o.device_key.empty() ? backend->device_info().key : o.device_key;
  calibration::Database db;
  if (std::filesystem::exists(o.out)) {
    db = calibration::load_database(o.out);
    spdlog::info("calibrate: resuming {} ({} measurements present)", o.out, db.size());
  }
  std::vector<calibration::CalibrationJob> jobs;
  if (o.sweep) {
    jobs = calibration::sweep_jobs(
        device, o.backend, dtypes,
        o.sweep_size == "tiny" ? calibration::SweepSize::kTiny : calibration::SweepSize::kFull,
        backend->device_info().device_count);
  } else {
    // Every op of every model's training step at each batch size and precision; the runner
    // measures each distinct measurement key once.
    std::vector<models::Op> ops;
    for (const Resolved& r : resolved) {
      if (r.llm) {
        for (int t : o.tps)
          for (int q : o.seq_lens)
            for (int b : o.batches)
              for (const auto& p : o.precisions) {
                const auto step = llm_ops(*r.llm, t, b, q, p);
                ops.insert(ops.end(), step.begin(), step.end());
              }
        continue;
      }
      for (int q : o.seq_lens)
        for (int b : o.batches)
          for (const auto& p : o.precisions) {
            models::StepOptions so;
            so.batch = b;
            so.precision = *common::parse_precision(p);
            so.seq_len = q;
            const auto step = models::build_training_step(*r.graph, so);
            ops.insert(ops.end(), step.ops().begin(), step.ops().end());
          }
    }
    jobs = calibration::jobs_for_ops(ops, device);
    spdlog::info("calibrate: {} ops, {} distinct kernels", ops.size(), jobs.size());
  }
  calibration::RunnerOptions ro;
  ro.out_path = o.out;
  ro.command = command_line(o);
  ro.should_stop = [] { return g_stop.load(); };
  const auto previous = std::signal(SIGINT, on_sigint);
  const calibration::RunReport r = calibration::run_calibration(*backend, jobs, ro, db);
  std::signal(SIGINT, previous);
  fmt::print("calibrate: {} measured, {} already present, {} unsupported on {} -> {} ({} rows)\n",
             r.measured, r.already_present, r.unsupported, o.backend, o.out, db.size());
  for (const auto& why : r.unsupported_reasons) fmt::print("  skipped: {}\n", why);
  if (r.interrupted) {
    fmt::print(stderr, "calibrate: interrupted; {} kept what was measured; rerun to resume\n",
               o.out);
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Action& action) {
  auto opts = std::make_shared<CalibrateOptions>();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "Measure kernels (Eigen on CPU, cuDNN/cuBLAS/NCCL on GPU) into a database");
  sub->add_option("--backend", opts->backend, "Kernel backend")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  sub->add_option("--models", opts->models, "Measure every distinct op shape of these models")
      ->delimiter(',');
  sub->add_option("--batch", opts->batches, "Batch sizes per GPU for --models")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--tp", opts->tps,
                  "LLM zoo models: tensor-parallel degrees (one GPU's shard; --batch is the "
                  "micro-batch in sequences)")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--seq-len", opts->seq_lens,
                  "Transformers: sequence lengths (0 = the model's default)")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--precision", opts->precisions, "Precisions: fp32, fp16, bf16, tf32")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_flag("--sweep", opts->sweep, "Measure a generic grid of shapes instead of models");
  sub->add_option("--sweep-size", opts->sweep_size, "Grid for --sweep")
      ->check(CLI::IsMember({"tiny", "full"}))
      ->capture_default_str();
  sub->add_option("-o,--out", opts->out, "Database file to write (resumed if it exists)")
      ->required()
      ->check(kNonEmpty);
  sub->add_option("--device-key", opts->device_key,
                  "Catalog key to record the device under (default: the backend's guess)")
      ->check(kNonEmpty);
  sub->add_option("--min-sample-time", opts->min_sample_s,
                  "Seconds each timed sample lasts at least")
      ->capture_default_str();
  sub->add_option("--cpu", opts->cpu,
                  "CPU backend: pin the measurement to this CPU (cores may differ in speed)")
      ->check(CLI::Range(0, 1 << 20));
  sub->add_option("--clock", opts->clock,
                  "CPU backend: time on the wall clock, or on the measuring thread's CPU clock "
                  "(leaves out time the OS gave the core to other processes)")
      ->check(CLI::IsMember({"wall", "thread"}))
      ->capture_default_str();
  CLI::Option* import =
      sub->add_option("--import-deepbench", opts->import_deepbench,
                      "Import DeepBench's published table for this device (v100-sxm2, p100-sxm2); "
                      "takes only --out and --deepbench-dir")
          ->check(kNonEmpty);
  sub->add_option("--deepbench-dir", opts->deepbench_dir,
                  "With --import-deepbench: the folder of the DeepBench CSVs (default: "
                  "calibration/data/deepbench in the data directories)")
      ->check(kNonEmpty)
      ->needs(import);
  // The import converts a published table: it measures nothing, so every option of a measuring
  // run would be silently ignored with it (the device is the table's).
  for (const char* name :
       {"--backend", "--models", "--batch", "--tp", "--seq-len", "--precision", "--sweep",
        "--sweep-size", "--device-key", "--min-sample-time", "--cpu", "--clock"})
    import->excludes(sub->get_option(name));
  sub->callback([opts, &action] { action = [opts]() -> int { return run_calibrate(*opts); }; });
}

}  // namespace scalecast::cli
