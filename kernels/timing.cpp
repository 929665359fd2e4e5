#include "kernels/timing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace scalecast::kernels {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

TimingStats time_until_stable(const std::function<double(int)>& run_loop,
                              const TimingOptions& options) {
  if (options.min_samples < 1 || options.max_samples < options.min_samples)
    throw std::invalid_argument("timing: need 1 <= min_samples <= max_samples");
  // Warm-up (docs/architecture.md, "Calibration"): the first call pays for allocation, caches and
  // JIT.
  double probe_s = run_loop(1);
  // Choose R: grow the loop until one sample spans min_sample_s.
  int reps = 1;
  while (probe_s < options.min_sample_s && reps < options.max_reps_per_sample) {
    const double per_call = std::max(probe_s / reps, 1e-9);
    const int want = static_cast<int>(std::ceil(options.min_sample_s / per_call * 1.2));
    reps = std::clamp(want, reps * 2, options.max_reps_per_sample);
    probe_s = run_loop(reps);
  }
  std::vector<double> samples;
  double total_s = 0.0;
  double last_median = -1.0;
  while (static_cast<int>(samples.size()) < options.max_samples) {
    const double t = run_loop(reps);
    samples.push_back(t / reps);
    total_s += t;
    const double med = median_of(samples);
    const bool enough = static_cast<int>(samples.size()) >= options.min_samples;
    if (enough && last_median > 0 && std::abs(med - last_median) <= options.stable_rel * med) break;
    if (enough && total_s >= options.max_total_s) break;
    last_median = med;
  }
  TimingStats st;
  st.samples = static_cast<int>(samples.size());
  st.reps_per_sample = reps;
  st.min_s = *std::min_element(samples.begin(), samples.end());
  st.median_s = median_of(samples);
  double sum = 0.0;
  for (double s : samples) sum += s;
  st.mean_s = sum / static_cast<double>(samples.size());
  return st;
}

}  // namespace scalecast::kernels
