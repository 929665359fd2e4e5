#pragma once
// Readers and bounds shared by the scenario loaders (scenario.cpp, scenario_allreduce.cpp) and
// validation points: counts as
// integers with a stated range (never through a double or a narrowing cast), and enum keys by
// their parser, both failing at the key (file:line:col).

#include <string>

#include "common/config_node.hpp"

namespace scalecast::sim {

inline constexpr int kMaxCount = 1'000'000;
// Micro-batches per iteration (`accumulation`); recipes use up to ~1,000. Validation points
// (validation/validation_file.cpp) take the same bound.
inline constexpr int kMaxAccumulation = 4096;
inline int positive_int(const common::ConfigNode& n) { return n.as_int_field(1, kMaxCount); }

template <class T, class F>
T enum_value(const common::ConfigNode& n, F parse, const char* allowed) {
  const auto v = parse(n.as_string());
  if (!v) n.fail(std::string("expected one of ") + allowed + ", got \"" + n.as_string() + "\"");
  return *v;
}

}  // namespace scalecast::sim
