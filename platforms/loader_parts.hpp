#pragma once
// Pieces of the platform loader shared by its source files (not a public interface): each
// parses one section of a platform file into its typed description.

#include <string>

#include "common/config_node.hpp"
#include "platforms/gpu_catalog.hpp"
#include "platforms/platform.hpp"

namespace scalecast::platforms::detail {

NodeType parse_node_type(const std::string& name, const common::ConfigNode& node,
                         const GpuCatalog& catalog);
Network parse_network(const common::ConfigNode& node);
// An integer >= minimum (as_count's message for negatives, "expected at least N" otherwise).
int count_at_least(const common::ConfigNode& node, int minimum);
// A down:up ratio given as a number (2) or a ratio string ("2:1"); must be >= 1.
double parse_ratio(const common::ConfigNode& node);

}  // namespace scalecast::platforms::detail
