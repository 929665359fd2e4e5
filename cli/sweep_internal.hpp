#pragma once
// What the sweep folder's two halves share: sweep_plan.cpp (plan, check and read a sweep folder)
// and sweep_merge.cpp (check each point's result and merge them). Not for other callers: the
// public interface is sweep_plan.hpp.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/sweep_plan.hpp"

namespace scalecast::cli {

// The whole file; std::runtime_error when it cannot be read.
std::string read_file(const std::string& path);
// Text from a file as a message quotes it: at most 120 characters.
std::string shown(const std::string& text);
// A JSON number written as a whole number (not 2.0 or 1e3), within 64 bits.
std::optional<std::int64_t> whole(const nlohmann::ordered_json& v);
// A combination's settings: the sweep's --set, then the combination's axis values.
std::vector<std::string> point_sets(const SweepPlan& plan, int combo);
// A combination's folder, absolute (combo-N, or points when there is one combination).
std::string combo_dir(const SweepPlan& plan, int combo);
// results/point-ID.json in the sweep folder.
std::string result_path(const SweepPlan& plan, int id);

}  // namespace scalecast::cli
