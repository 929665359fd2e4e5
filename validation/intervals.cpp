#include "validation/intervals.hpp"

#include <algorithm>

namespace scalecast::validation {

std::vector<Interval> interval_union(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second) {
      out.back().second = std::max(out.back().second, i.second);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

std::int64_t total_length(const std::vector<Interval>& merged) {
  std::int64_t sum = 0;
  for (const Interval& i : merged) sum += i.second - i.first;
  return sum;
}

std::int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t sum = 0;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].first, b[j].first);
    const std::int64_t hi = std::min(a[i].second, b[j].second);
    if (hi > lo) sum += hi - lo;
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return sum;
}

}  // namespace scalecast::validation
