#pragma once
// Repeat-until-stable timing shared by every backend (docs/architecture.md, "Calibration"): one
// untimed warm-up, then a loop length R chosen so each sample lasts at least `min_sample_s`, then
// samples until the median settles (or a cap is hit). The backend supplies only "run R calls back
// to back and return the elapsed seconds" (std::chrono on the CPU, CUDA events on a GPU).

#include <functional>

#include "kernels/kernel_request.hpp"

namespace scalecast::kernels {

struct TimingOptions {
  double min_sample_s = 1e-3;  // each sample spans at least this long (DeepBench-style loops)
  int min_samples = 5;  // docs/architecture.md, "Calibration": repeat ≥5 times, keep min and median
  int max_samples = 30;
  double stable_rel = 0.02;  // stop once the median moves less than this between samples
  double max_total_s = 2.0;  // stop sampling after this much measured time
  int max_reps_per_sample = 1 << 16;
  // CPU backend only: time samples on the calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID)
  // instead of the wall clock, so time the OS gives to other processes while a sample runs is
  // not counted: the kernel's time on a dedicated core, robust to a shared machine. Valid for
  // single-threaded kernels only (the backend refuses it when Eigen runs several threads).
  bool cpu_thread_clock = false;
};

// `run_loop(R)` runs R back-to-back calls and returns their total elapsed time in seconds.
TimingStats time_until_stable(const std::function<double(int)>& run_loop,
                              const TimingOptions& options);

}  // namespace scalecast::kernels
