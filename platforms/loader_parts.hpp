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
// An integer in [lo, hi] (a count of per-node parts: GPUs, NICs, switches, link bricks).
int count_in(const common::ConfigNode& node, int lo, int hi);
// A down:up ratio given as a number (2) or a ratio string ("2:1"); from 1 to kMaxRatio.
double parse_ratio(const common::ConfigNode& node);

// Physical ranges of platform quantities: values outside are typos or unit slips ("0GBps",
// "1e300GBps") that would otherwise reach SimGrid (which aborts on a zero or infinite
// bandwidth) or overflow products such as radix x port bandwidth.
inline constexpr double kMinBandwidth_Bps = 1e3;   // 1 kB/s
inline constexpr double kMaxBandwidth_Bps = 1e15;  // 1 PB/s
inline constexpr double kMaxLatency_s = 1.0;
inline constexpr double kMaxSize_bytes = 1e21;  // 1 ZB (capacity of a file system)
inline constexpr double kMaxFlops = 1e18;       // 1 EFLOP/s per device
inline constexpr double kMaxRate = 1e12;        // operations per second
inline constexpr double kMaxRatio = 1000.0;
inline constexpr int kMaxPartsPerNode = 1024;
// A bandwidth in [kMinBandwidth_Bps, kMaxBandwidth_Bps]; a latency in [0, kMaxLatency_s].
double bandwidth(const common::ConfigNode& node);
double bandwidth_or(const common::ConfigNode& map, const char* key, double fallback);
double latency_or(const common::ConfigNode& map, const char* key);

}  // namespace scalecast::platforms::detail
