#include "sim/compute_clock.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace scalecast::sim {

void ComputeClock::start(double start_s) {
  start_s_ = start_s;
  held_.clear();
}

void ComputeClock::contend(double t0_s, double t1_s, double share) {
  if (!(share >= 0.0 && share <= 1.0))
    throw std::invalid_argument("compute clock: SM share " + std::to_string(share) +
                                ", expected 0..1");
  if (!(t1_s >= t0_s))
    throw std::invalid_argument("compute clock: an interval ending before it starts");
  if (!held_.empty() && t0_s < held_.back().t1)
    throw std::invalid_argument("compute clock: intervals out of order or overlapping");
  if (t1_s > t0_s && share > 0.0) held_.push_back({t0_s, t1_s, share});
}

double ComputeClock::wall_at(double work_s) const {
  double t = start_s_, left = work_s;
  for (const Held& h : held_) {
    if (h.t1 <= t) continue;
    const double a = std::max(t, h.t0);
    if (left <= a - t) return t + left;  // done before this interval
    left -= a - t;
    const double rate = 1.0 - h.share;
    const double can = (h.t1 - a) * rate;
    if (rate > 0.0 && left <= can) return a + left / rate;
    left -= can;
    t = h.t1;
  }
  return t + left;
}

}  // namespace scalecast::sim
