// `scalecast calibrate`: measure real kernels and write a calibration database.

#include <memory>

#include "cli/commands.hpp"

namespace scalecast::cli {
namespace {

struct CalibrateOptions {
  std::string backend = "cpu";
  std::vector<std::string> models;
  std::vector<int> batches{32};
  std::vector<std::string> precisions{"fp32"};
  bool sweep = false;
  std::string out;
};

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
  sub->add_option("--precision", opts->precisions, "Precisions: fp32, fp16, bf16, tf32")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_flag("--sweep", opts->sweep, "Measure a generic grid of shapes instead of models");
  sub->add_option("-o,--out", opts->out, "Database file to write (resumed if it exists)")
      ->required();
  sub->callback([opts, &action] {
    action = [opts]() -> int {
      throw NotBuilt("calibrate: the kernel backends are not built yet (issue 'Calibration')");
    };
  });
}

}  // namespace scalecast::cli
