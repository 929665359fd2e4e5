#pragma once
// The calibration runner: turns model ops (deduplicated by measurement key) or a generic sweep
// into kernel requests, times each on a kernels/ backend and stores the results in a database
// with one provenance record per run. Runs are resumable: keys already in the database are
// skipped, and the database file is rewritten atomically every few seconds, so an interrupted
// run keeps what it measured.

#include <functional>
#include <string>
#include <vector>

#include "calibration/database.hpp"
#include "kernels/kernel_backend.hpp"
#include "models/op.hpp"
#include "models/parallel_config.hpp"
#include "models/transformer.hpp"

namespace scalecast::calibration {

struct CalibrationJob {
  MeasurementKey key;  // selection is filled from each result
  kernels::KernelRequest request;
  double bytes_moved = 0.0;
};

// One job per distinct key among `ops` (first occurrence order), for `device`.
std::vector<CalibrationJob> jobs_for_ops(const std::vector<models::Op>& ops,
                                         const std::string& device);

// The ops of one micro-batch (forward, backward, optimizer) of an LLM transformer on one GPU of a
// tensor-parallel group of `tp` (sequence parallelism on when tp > 1, as Megatron-LM runs TP),
// one pipeline rank holding every layer, so the embedding and the loss are in: every kernel shape
// a job with this model, TP degree, micro-batch, sequence length (0 = the model's) and precision
// prices, whatever its PP, CP, DP and recomputation. The optimizer step comes at each quarter of
// the shard's size down to 256 Ki elements, smallest first, then the whole shard (its size is
// what the PP and ZeRO split leaves; the whole may not fit a device, so it is measured last).
// Communication is not a kernel here.
// std::invalid_argument when the split does not fit the model (TP must divide the heads).
std::vector<models::Op> llm_calibration_ops(const models::TransformerSpec& model, int tp,
                                            std::int64_t micro_batch, std::int64_t seq_len,
                                            models::LlmPrecision precision);

enum class SweepSize { kTiny, kFull };
// A generic grid: GEMMs, ResNet-like convs (three passes), memory-bound ops and copies in each
// dtype, and on the cuda backend NCCL all-reduce/all-gather/reduce-scatter/broadcast size sweeps
// over `gpus` ranks (with one GPU they are reported unsupported and skipped).
std::vector<CalibrationJob> sweep_jobs(const std::string& device, const std::string& backend,
                                       const std::vector<common::DType>& dtypes, SweepSize size,
                                       int gpus = 1);

// The kernel request a key is measured with (shapes the key does not pin down, such as the
// channel count of a batch-norm, get documented defaults; see README).
kernels::KernelRequest request_for(const MeasurementKey& key);

struct RunnerOptions {
  std::string out_path;           // "" = do not write (tests)
  std::string command;            // recorded in the provenance
  double flush_interval_s = 2.0;  // atomic rewrite of out_path at most this often
  bool show_progress = true;
  std::function<bool()> should_stop;  // polled between jobs (Ctrl-C)
  std::string date;                   // provenance date; "" = now (UTC)
  // Measure every job this many times, round-robin over the jobs, and store the median of the
  // rounds' medians: on a shared machine whose speed drifts, each key then samples the whole
  // run instead of one moment of it (the CPU end-to-end test). 1 = once, in job order.
  int rounds = 1;
};

struct RunReport {
  int measured = 0;                              // jobs timed in this run
  int already_present = 0;                       // skipped: key in the database from an earlier run
  int unsupported = 0;                           // skipped: the backend cannot run them
  std::vector<std::string> unsupported_reasons;  // distinct reasons
  bool interrupted = false;
  std::string source_id;
};

RunReport run_calibration(kernels::KernelBackend& backend, const std::vector<CalibrationJob>& jobs,
                          const RunnerOptions& options, Database& db);

}  // namespace scalecast::calibration
