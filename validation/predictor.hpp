#pragma once
// The seam between validation and the simulator: "simulate this training configuration and tell
// me its throughput and where the time goes". The protocol (protocol.hpp) only talks to this
// interface, so it is tested with fakes and drives the real replay engine through
// RunPredictor (run_predictor.hpp), which runs `scalecast run` once per configuration because
// SimGrid allows one engine per process.

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "validation/validation_file.hpp"

namespace scalecast::validation {

// One configuration to simulate, in validation-file terms.
struct Configuration {
  std::string system;    // platform name, or a path to a platform YAML file
  std::string base_dir;  // folder that a relative platform path is resolved against
  std::string model;
  std::optional<int> seq_len;
  bool fused_attention = false;  // scenario `attention: fused`
  std::string precision;  // "fp32", "amp_fp16", "tf32" ("unknown" is mapped before, see protocol)
  bool precision_stated = true;  // false where the source gave "unknown" (simulated as fp32)
  std::string
      framework;  // validation-file framework: sets the scenario's bucketing and fixed costs
  Strategy strategy = Strategy::kNone;
  std::vector<std::string> comm;
  int batch_per_gpu = 0;
  int accumulation = 1;  // micro-batches per gradient exchange (scenario `accumulation`)
  // Scenario `allreduce.*` keys the point's source states (validation file `allreduce`).
  std::vector<std::pair<std::string, std::string>> allreduce;
  int gpus = 1;
  int nodes = 1;
  double framework_efficiency = 1.0;  // scalar on compute speed: compute time / efficiency
  // Parallel (LLM) points: the scenario's `parallel:` map as one line of flow YAML (the point's
  // map with its seq_len and precision added); empty for data-parallel points.
  std::string parallel;
};

// Where one iteration's time goes, seconds per iteration (replay summary.json "breakdown").
struct Breakdown {
  double compute_s = 0.0;
  double exposed_comm_s = 0.0;
  double io_stall_s = 0.0;
  double copy_s = 0.0;
  double idle_s = 0.0;
};

struct Prediction {
  double throughput_samples_per_s = 0.0;  // whole job
  double iteration_time_s = 0.0;
  Breakdown breakdown;
  // LLM runs (summary.json of the pipeline job): tokens/s per GPU, MFU and HFU as fractions.
  double tokens_per_s_per_gpu = 0.0, mfu = 0.0, hfu = 0.0;
  double peak_flops_per_gpu = 0.0;  // the peak MFU and HFU are stated against
  // Share of the step's op time priced from measured kernels (summary.json op_costs); < 0 when
  // the run does not report it (LLM runs).
  double measured_kernel_share = -1.0;
};

// A configuration the simulator cannot express (no platform of that name, unknown model,
// unsupported strategy). The protocol lists the point as skipped with what() as the reason.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Predictor {
 public:
  virtual ~Predictor() = default;
  // Simulates `config`; throws Unsupported when it cannot be expressed. Called from several
  // threads at once when the protocol runs with jobs > 1.
  virtual Prediction predict(const Configuration& config) const = 0;
};

// The configuration a point describes (framework efficiency left at 1).
Configuration configuration_of(const ValidationPoint& point, const std::string& base_dir);

}  // namespace scalecast::validation
