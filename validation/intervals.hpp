#pragma once
// Busy time is an interval union, not a sum: streams overlap, so summing kernel durations
// double-counts (reference section 1: one DeepSeek step sums to 244 ms of kernels but their union
// is 128.5 ms). Sort by start and merge, O(n log n); intersections walk two merged lists.

#include <cstdint>
#include <utility>
#include <vector>

namespace scalecast::validation {

using Interval = std::pair<std::int64_t, std::int64_t>;  // [start, end) in ns

// Merged, sorted, non-overlapping intervals covering the same points; empty ones are dropped.
std::vector<Interval> interval_union(std::vector<Interval> intervals);
// Total length of merged intervals.
std::int64_t total_length(const std::vector<Interval>& merged);
// |A ∩ B| of two merged lists.
std::int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace scalecast::validation
