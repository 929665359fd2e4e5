#pragma once
// A validation file (format: validation/FORMAT.md, the project's copy of the protocol):
// measured training throughputs, each an `anchor` (may be used for calibration) or a `predict`
// point (must be predicted from its named anchor). The loader checks everything the format
// requires before any simulation starts and reports faults as ConfigErrors with file:line:col,
// the key path and what was expected.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/config_node.hpp"
#include "models/parallel_config.hpp"

namespace scalecast::validation {

enum class Role { kAnchor, kPredict };
// kParallel: an LLM job parallelised as the point's `parallel` map says (FORMAT.md section 9).
enum class Strategy { kNone, kAllreduce, kParameterServer, kParameterServerCpu, kParallel };
// The LLM metrics (parallel points only), each in its source's definition: tokens per second per
// GPU, seconds per iteration, model / hardware FLOPs utilisation (fractions), and hardware
// TFLOP/s per GPU as Narayanan et al. count it (recomputation included).
enum class MeasuredKind {
  kThroughput,
  kScalingEfficiency,
  kTokensPerSecondPerGpu,
  kIterationSeconds,
  kMfu,
  kHfu,
  kTflopsPerGpu
};
std::string_view to_string(MeasuredKind k);  // the key in the file: "throughput", "mfu", ...

std::string_view to_string(Strategy s);

struct Measured {
  MeasuredKind kind = MeasuredKind::kThroughput;
  double value = 0.0;  // samples/s of the whole job, an efficiency fraction in (0, 1], or the
                       // LLM metric in its unit (tokens/s/GPU, s, fraction, TFLOP/s per GPU)
  std::optional<int> baseline_gpus;  // scaling_efficiency only, when the source states it
  // mfu / hfu only: how the source counted model FLOPs (FORMAT.md section 9, key `flops`).
  models::FlopConvention flops = models::FlopConvention::kModel;
};

// Where a key was written in the validation file, for a fault found after loading: a skip reason
// or an error at file:line:col and the key path, never at a file validate generated.
struct KeyAt {
  std::string file;
  int line = 0;
  int column = 0;
  std::string key;

  static KeyAt of(const common::ConfigNode& node);
  // "file:line:col: key: message", as a skip reason (FORMAT.md section 5.4).
  std::string reason(const std::string& message) const;
};

struct ValidationPoint {
  std::string id;
  std::string system;   // platform name
  std::string network;  // free text, informational
  std::string model;
  std::optional<int> seq_len;
  // Tokens each sample computes on average where the recipe does not pad to seq_len (FORMAT.md
  // section 2): the dataset's mean length without padding, a row over its samples when packed.
  // Absent: seq_len. Not part of the anchor key: it is how the run fed its samples, like the batch.
  std::optional<int> tokens_per_sample;
  // `attention: fused`: the recipe runs each attention layer as one kernel per pass (FORMAT.md
  // section 2; scenario key `attention`). Not part of the anchor key.
  bool fused_attention = false;
  std::string precision;  // "fp32", "amp_fp16", "tf32" or "unknown"
  std::string framework;
  Strategy strategy = Strategy::kNone;
  std::vector<std::string> comm;  // subset of nccl, mpi_cpu, tcp, rdma; empty = not stated
  int batch_per_gpu = 0;          // 0 for parallel points (their `parallel` map gives the batches)
  // Micro-batches per gradient exchange where the source states it (FORMAT.md section 2), else 1.
  int accumulation = 1;
  // The source's gradient-exchange settings, as scenario `allreduce.*` keys and their values in
  // file order (bucketing, fusion_buffer, first_bucket, packs, after_backward); empty = not stated.
  std::vector<std::pair<std::string, std::string>> allreduce;
  int gpus = 0;
  int nodes = 0;
  Measured measured;
  Role role = Role::kAnchor;
  std::string anchor;  // predict points: id of the anchor they are simulated from
  std::string source;
  std::string notes;
  int line = 0;  // 1-based line of the point in its file, for messages
  // Where `nodes` was given (file:line:col and key path), for node counts rejected later.
  int nodes_line = 0;
  int nodes_column = 0;
  std::string nodes_key;
  // Where `system`, `model`, `seq_len` and the measured value were given.
  KeyAt system_at;
  KeyAt model_at;
  KeyAt seq_len_at;
  KeyAt measured_at;
  // Why the point cannot be simulated (no platform of that name, unknown model, a sequence
  // length its model cannot take), set by
  // mark_unsimulatable() before any simulation; the protocol lists the point as skipped with it.
  std::string unsimulatable;

  // Parallel (LLM) points only (FORMAT.md section 9): the source family (with `system`, the anchor
  // key), the `parallel` map as written, and the configuration parse_parallel() made of it when
  // `model` is a transformer of the LLM zoo (seq_len and precision taken from the point).
  std::string family;
  std::optional<common::ConfigNode> parallel_node;
  std::optional<models::ParallelConfig> parallel;
  bool is_parallel() const { return strategy == Strategy::kParallel; }

  int gpus_per_node() const { return gpus / nodes; }
  // The anchor key (README section 5.1): system, model, seq_len, precision, framework; for
  // parallel points system and family (section 9).
  std::string anchor_key() const;
};

struct ValidationFile {
  std::string path;  // as given; platforms named by relative path resolve against its folder
  std::vector<ValidationPoint> points;
  int context_count = 0;
  int io_observation_count = 0;

  const ValidationPoint* find(const std::string& id) const;
};

// Loads and checks a validation file; throws common::ConfigError on the first fault.
ValidationFile load_validation_file(const std::string& path);
// The same for text in memory; `name` stands for the file in messages.
ValidationFile parse_validation_text(const std::string& text, const std::string& name);

}  // namespace scalecast::validation
