#include "calibration/calibration_runner.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "common/progress.hpp"
#include "models/llm_step.hpp"

namespace scalecast::calibration {
namespace {

using kernels::KernelKind;
using kernels::KernelRequest;

kernels::ConvPass conv_pass(const std::string& pass) {
  if (pass == "bwd_data") return kernels::ConvPass::kBackwardData;
  if (pass == "bwd_filter") return kernels::ConvPass::kBackwardFilter;
  return kernels::ConvPass::kForward;
}

kernels::CopyDirection direction(const std::string& pass) {
  using kernels::CopyDirection;
  if (pass == "d2h") return CopyDirection::kDeviceToHost;
  if (pass == "d2d") return CopyDirection::kDeviceToDevice;
  if (pass == "p2p") return CopyDirection::kPeerToPeer;
  if (pass == "h2h") return CopyDirection::kHostToHost;
  return CopyDirection::kHostToDevice;
}

kernels::CollectiveKind collective(const std::string& pass) {
  using kernels::CollectiveKind;
  if (pass == "all_gather") return CollectiveKind::kAllGather;
  if (pass == "reduce_scatter") return CollectiveKind::kReduceScatter;
  if (pass == "broadcast") return CollectiveKind::kBroadcast;
  return CollectiveKind::kAllReduce;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One result per selection mode from several rounds of the same request: the median of the
// rounds' medians, the least minimum, all samples counted.
std::vector<kernels::KernelResult> combine_rounds(
    const std::vector<std::vector<kernels::KernelResult>>& rounds) {
  std::vector<kernels::KernelResult> out = rounds.back();
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::vector<double> medians;
    double sum_mean = 0.0;
    int n = 0;
    for (const auto& round : rounds) {
      if (i >= round.size() || round[i].selection != out[i].selection) continue;
      const kernels::TimingStats& t = round[i].timing;
      medians.push_back(t.median_s);
      out[i].timing.min_s = std::min(out[i].timing.min_s, t.min_s);
      sum_mean += t.mean_s;
      if (&round != &rounds.back()) out[i].timing.samples += t.samples;
      ++n;
    }
    out[i].timing.median_s = median_of(medians);
    out[i].timing.mean_s = sum_mean / n;
  }
  return out;
}

MeasurementKey strip(MeasurementKey k) {
  k.selection.clear();
  return k;
}

double bytes_for(const KernelRequest& r, const MeasurementKey& key) {
  switch (r.kind) {
    case KernelKind::kConv:
    case KernelKind::kGemm:
      return key_min_bytes(key);
    case KernelKind::kMemcpy:
    case KernelKind::kCollective:
    case KernelKind::kFileRead:
      return static_cast<double>(r.size_bytes);
    default:
      // One read and one write per element (backward kernels read x and dy).
      return static_cast<double>(r.elements) * common::dtype_bytes(r.dtype) * (r.backward ? 3 : 2);
  }
}

// The backend's measurement of one job; a kernel failure names the op it measured.
std::vector<kernels::KernelResult> measure_job(kernels::KernelBackend& backend,
                                               const CalibrationJob& job) {
  try {
    return backend.measure(job.request);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("calibrate: {}: {}", job.key.signature(), e.what()));
  }
}

}  // namespace

KernelRequest request_for(const MeasurementKey& key) {
  KernelRequest r;
  r.dtype = key.dtype;
  r.tensor_core = key.tensor_core;
  r.backward = key.pass != "fwd";
  const auto d = [&](const char* n, std::int64_t fallback = 0) {
    return key.dims.count(n) ? key.dim(n) : fallback;
  };
  if (key.op == "conv") {
    r.kind = KernelKind::kConv;
    r.pass = conv_pass(key.pass);
    r.conv = {d("n"),
              d("c"),
              d("h"),
              d("w"),
              d("k"),
              d("r"),
              d("s"),
              d("pad_h"),
              d("pad_w"),
              d("stride_h", 1),
              d("stride_w", 1),
              d("dilation_h", 1),
              d("dilation_w", 1),
              d("groups", 1)};
  } else if (key.op == "gemm" || key.op == "attention") {
    r.kind = KernelKind::kGemm;
    r.gemm = {d("m"), d("n"), d("k"), d("trans_a") != 0, d("trans_b") != 0, d("batch", 1)};
  } else if (key.op == "memcpy") {
    r.kind = KernelKind::kMemcpy;
    r.direction = direction(key.pass);
    r.size_bytes = d("bytes");
  } else if (key.op == "collective") {
    r.kind = KernelKind::kCollective;
    r.tensor_core = false;
    r.collective = collective(key.pass);
    r.size_bytes = d("bytes");
  } else if (key.op == "file_read") {
    r.kind = KernelKind::kFileRead;
    r.size_bytes = d("bytes");
  } else if (key.op == "normalization") {
    // Batch-norm of an N×C×H×W tensor: the key has only the element count; 64 channels (the
    // narrowest ResNet stage) is the default channel split.
    r.kind = KernelKind::kNormalization;
    r.elements = d("elements");
    r.channels = 64;
  } else if (key.op == "pooling") {
    // Max pooling; the key holds an element count (outputs for the forward pass, the input
    // gradient for backward: the tensor each pass writes) and the window (r x s, stride).
    // Rebuilt as P planes each at least as large as the window (no padding): a window as large
    // as its stride is global pooling (one output per plane, the plane is the window), anything
    // else one square plane. So the job writes about the key's element count and the input is
    // never smaller than the window.
    r.kind = KernelKind::kPooling;
    const std::int64_t elements = std::max<std::int64_t>(1, d("elements"));
    const std::int64_t win_r = std::max<std::int64_t>(1, d("r", 3));
    const std::int64_t win_s = std::max<std::int64_t>(1, d("s", win_r));
    const std::int64_t stride = std::max<std::int64_t>(1, d("stride_h", 2));
    const bool global = win_r == stride && win_s == stride;
    const auto root = static_cast<std::int64_t>(std::sqrt(static_cast<double>(elements)));
    std::int64_t planes = 1, h = 0, w = 0;
    if (global) {
      planes = std::max<std::int64_t>(1, r.backward ? elements / (win_r * win_s) : elements);
      h = win_r, w = win_s;
    } else if (!r.backward) {
      const std::int64_t o = std::max<std::int64_t>(1, root);  // o x o outputs
      h = (o - 1) * stride + win_r, w = (o - 1) * stride + win_s;
    } else {
      h = std::max(root, win_r), w = std::max(root, win_s);
    }
    r.conv = {1, planes, h, w, 1, win_r, win_s, 0, 0, stride, stride, 1, 1, 1};
    r.elements = r.backward ? planes * h * w
                            : planes * ((h - win_r) / stride + 1) * ((w - win_s) / stride + 1);
  } else if (key.op == "softmax") {
    // Rows of 1000 classes (ImageNet classifiers) when the count divides, else one row.
    r.kind = KernelKind::kSoftmax;
    r.elements = d("elements");
    r.channels = r.elements % 1000 == 0 ? 1000 : r.elements;
  } else {
    r.kind = KernelKind::kElementwise;  // elementwise, reduction, embedding, optimizer
    r.elements = d("elements");
  }
  return r;
}

std::vector<CalibrationJob> jobs_for_ops(const std::vector<models::Op>& ops,
                                         const std::string& device) {
  std::vector<CalibrationJob> jobs;
  std::set<MeasurementKey> seen;
  for (const auto& op : ops) {
    MeasurementKey key = key_for(op, device);
    key.selection.clear();
    if (!seen.insert(key).second) continue;
    CalibrationJob job{key, request_for(key), 0.0};
    job.bytes_moved = bytes_for(job.request, key);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

std::vector<models::Op> llm_calibration_ops(const models::TransformerSpec& model, int tp,
                                            std::int64_t micro_batch, std::int64_t seq_len,
                                            models::LlmPrecision precision) {
  models::ParallelConfig pc;
  pc.tp = tp;
  pc.micro_batch = micro_batch;
  pc.global_batch = micro_batch;
  pc.seq_len = seq_len > 0 ? seq_len : model.seq_len;
  pc.sequence_parallel = tp > 1;
  pc.precision = precision;
  models::check_parallel(pc, model, tp);
  std::vector<models::Op> ops;
  for (const auto& chunk : models::build_llm_step(model, pc)) {
    for (const auto* segments : {&chunk.forward, &chunk.backward})
      for (const auto& seg : *segments) ops.insert(ops.end(), seg.ops.begin(), seg.ops.end());
    // The optimizer step's size is what a job's split leaves on a GPU (the chunk's parameters,
    // / DP with ZeRO): every quarter of the whole shard down to 256 Ki elements, then the shard,
    // give the memory-bound curve that prices any pipeline and ZeRO split. The backends time a
    // shard larger than one buffer set (8.8 G elements for Llama 3 70B at TP 8) over reused
    // pieces (kernels::element_pieces); smallest first all the same, so that a kernel that
    // fails (a device too small even for the pieces) ends the run after the sizes before it.
    for (const auto& opt : chunk.optimizer_ops) {
      std::vector<double> factors{1.0};
      while (static_cast<double>(opt.elements) * factors.back() / 4.0 >= 262144.0)
        factors.push_back(factors.back() / 4.0);
      for (auto f = factors.rbegin(); f != factors.rend(); ++f) {
        models::Op o = opt;
        o.elements = static_cast<std::int64_t>(static_cast<double>(opt.elements) * *f + 0.5);
        o.flops *= *f, o.bytes_read *= *f, o.bytes_written *= *f;
        ops.push_back(std::move(o));
      }
    }
  }
  return ops;
}

std::vector<CalibrationJob> sweep_jobs(const std::string& device, const std::string& backend,
                                       const std::vector<common::DType>& dtypes, SweepSize size,
                                       int gpus) {
  const bool tiny = size == SweepSize::kTiny;
  std::vector<MeasurementKey> keys;
  for (const auto dtype : dtypes) {
    const bool tc = dtype != common::DType::kFp32 && dtype != common::DType::kFp64;
    const auto add = [&](std::string op, std::string pass,
                         std::map<std::string, std::int64_t> dims) {
      keys.push_back({device, std::move(op), std::move(pass), dtype, tc, "", std::move(dims)});
    };
    const std::vector<std::int64_t> squares =
        tiny ? std::vector<std::int64_t>{64, 128}
             : std::vector<std::int64_t>{256, 512, 1024, 2048, 4096};
    for (auto m : squares)
      add("gemm", "any", {{"m", m}, {"n", m}, {"k", m}, {"trans_a", 0}, {"trans_b", 0}});
    if (!tiny)
      for (std::int64_t n : {16, 64, 256})
        add("gemm", "any", {{"m", 1024}, {"n", n}, {"k", 1024}, {"trans_a", 0}, {"trans_b", 0}});
    // ResNet-like convs: (c, hw, k, rs, pad, stride).
    const std::vector<std::array<std::int64_t, 6>> convs =
        tiny ? std::vector<std::array<std::int64_t, 6>>{{8, 8, 8, 3, 1, 1}}
             : std::vector<std::array<std::int64_t, 6>>{
                   {64, 56, 64, 3, 1, 1},   {64, 56, 256, 1, 0, 1}, {128, 28, 128, 3, 1, 1},
                   {256, 14, 256, 3, 1, 1}, {512, 7, 512, 3, 1, 1}, {3, 224, 64, 7, 3, 2}};
    const std::vector<std::int64_t> batches =
        tiny ? std::vector<std::int64_t>{1, 2} : std::vector<std::int64_t>{1, 2, 4, 8};
    for (const auto& c : convs)
      for (auto n : batches)
        for (const char* pass : {"fwd", "bwd_data", "bwd_filter"})
          add("conv", pass,
              {{"n", n},
               {"c", c[0]},
               {"h", c[1]},
               {"w", c[1]},
               {"k", c[2]},
               {"r", c[3]},
               {"s", c[3]},
               {"pad_h", c[4]},
               {"pad_w", c[4]},
               {"stride_h", c[5]},
               {"stride_w", c[5]}});
    const std::vector<std::int64_t> elems =
        tiny ? std::vector<std::int64_t>{1 << 12, 1 << 14}
             : std::vector<std::int64_t>{1 << 16, 1 << 20, 1 << 22, 1 << 24};
    for (auto e : elems)
      for (const char* op : {"elementwise", "normalization"})
        for (const char* pass : {"fwd", "bwd_data"}) add(op, pass, {{"elements", e}});
    for (auto e : elems)
      add("pooling", "fwd", {{"elements", e}, {"r", 3}, {"s", 3}, {"stride_h", 2}});
    for (auto e : elems) add("softmax", "fwd", {{"elements", e / 1000 * 1000}});
    const std::vector<std::int64_t> sizes =
        tiny ? std::vector<std::int64_t>{1 << 16, 1 << 20}
             : std::vector<std::int64_t>{1 << 16, 1 << 20, 1 << 24, 1 << 26};
    if (dtype == dtypes.front()) {  // copies and collectives do not depend on the compute dtype
      const std::vector<std::string> dirs =
          backend == "cuda" ? std::vector<std::string>{"h2d", "d2h", "d2d", "p2p"}
                            : std::vector<std::string>{"h2h"};
      for (const auto& dir : dirs)
        for (auto s : sizes) add("memcpy", dir, {{"bytes", s}});
    }
    if (backend == "cuda" && (dtype == common::DType::kFp32 || dtype == common::DType::kFp16)) {
      // DeepBench's all-reduce sizes span 0.4 MB–258 MB ([DeepBench]); powers of 4 here.
      const std::vector<std::int64_t> coll =
          tiny ? std::vector<std::int64_t>{1 << 20}
               : std::vector<std::int64_t>{1 << 16, 1 << 18, 1 << 20, 1 << 22,
                                           1 << 24, 1 << 26, 1 << 28};
      for (const char* kind : {"all_reduce", "all_gather", "reduce_scatter", "broadcast"})
        for (auto s : coll) add("collective", kind, {{"bytes", s}, {"ranks", gpus}});
    }
  }
  std::vector<CalibrationJob> jobs;
  for (auto& k : keys) {
    CalibrationJob job{k, request_for(k), 0.0};
    job.bytes_moved = bytes_for(job.request, k);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

RunReport run_calibration(kernels::KernelBackend& backend, const std::vector<CalibrationJob>& jobs,
                          const RunnerOptions& options, Database& db) {
  RunReport report;
  const kernels::DeviceInfo info = backend.device_info();
  std::set<MeasurementKey> done;
  for (const Measurement* m : db.measurements()) done.insert(strip(m->key));
  std::string device = jobs.empty() ? info.key : jobs.front().key.device;
  Source src;
  src.date = options.date.empty() ? utc_now() : options.date;
  src.id = fmt::format("{}-{}-{}", info.backend, device, src.date);
  src.device = device;
  src.device_name = info.name;
  src.backend = info.backend;
  src.driver = info.driver;
  src.libraries = info.libraries;
  src.properties = info.properties;
  src.command = options.command;
  src.timing =
      "warm-up, then samples of R back-to-back calls (each sample >= min time) until the "
      "median settles; median and min over samples";
  if (options.rounds > 1)
    src.timing +=
        fmt::format("; {} rounds over all jobs, median of the rounds' medians", options.rounds);
  bool source_added = false;
  report.source_id = src.id;
  auto last_flush = std::chrono::steady_clock::now();
  const auto flush = [&] {
    if (!options.out_path.empty()) save_database(db, options.out_path);
    last_flush = std::chrono::steady_clock::now();
  };
  std::set<std::string> reasons;
  // Earlier rounds: every job to be measured, round-robin, so that repeated measurements of one
  // key are spread over the whole run; the last round is the loop below.
  if (options.rounds < 1)
    throw std::invalid_argument(
        fmt::format("calibration: rounds must be >= 1, got {}", options.rounds));
  std::map<std::size_t, std::vector<std::vector<kernels::KernelResult>>> earlier;
  for (int round = 1; round < options.rounds && !report.interrupted; ++round) {
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (options.should_stop && options.should_stop()) {
        report.interrupted = true;
        break;
      }
      if (done.count(strip(jobs[i].key)) || !backend.unsupported_reason(jobs[i].request).empty())
        continue;
      earlier[i].push_back(measure_job(backend, jobs[i]));
    }
  }
  std::unique_ptr<common::Progress> progress;
  if (options.show_progress)
    progress = std::make_unique<common::Progress>("calibrate", jobs.size());
  for (std::size_t i = 0; i < jobs.size() && !report.interrupted; ++i) {
    const CalibrationJob& job = jobs[i];
    if (options.should_stop && options.should_stop()) {
      report.interrupted = true;
      break;
    }
    const std::string label = job.key.signature();
    if (done.count(strip(job.key))) {
      ++report.already_present;
      if (progress) progress->advance(1, "present " + label);
      continue;
    }
    if (const auto why = backend.unsupported_reason(job.request); !why.empty()) {
      ++report.unsupported;
      if (reasons.insert(why).second) spdlog::warn("calibrate: skipping {}: {}", label, why);
      if (progress) progress->advance(1, "skipped " + label);
      continue;
    }
    if (!source_added) db.add_source(src), source_added = true;
    std::vector<kernels::KernelResult> results = measure_job(backend, job);
    if (const auto it = earlier.find(i); it != earlier.end()) {
      it->second.push_back(std::move(results));
      results = combine_rounds(it->second);
    }
    for (const auto& res : results) {
      Measurement m;
      m.key = job.key;
      m.key.selection = res.selection;
      m.median_s = res.timing.median_s;
      m.min_s = res.timing.min_s;
      m.samples = res.timing.samples;
      m.reps = res.timing.reps_per_sample;
      m.algorithm = res.algorithm;
      m.math = res.math;
      m.workspace_bytes = res.workspace_bytes;
      m.bytes_moved = job.bytes_moved;
      if (res.ranks > 1)
        m.note = fmt::format("ranks {}, busbw {:.4g} GB/s", res.ranks, res.busbw_Bps / 1e9);
      m.source = src.id;
      db.put(m);
    }
    done.insert(strip(job.key));
    ++report.measured;
    if (progress) progress->advance(1, label);
    const double since =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_flush).count();
    if (since >= options.flush_interval_s) flush();
  }
  if (progress) progress->finish();
  report.unsupported_reasons.assign(reasons.begin(), reasons.end());
  flush();
  return report;
}

}  // namespace scalecast::calibration
