#pragma once
// What a scenario's `framework` sets before its own allreduce.* and fixed_costs.* keys: the
// gradient bucketing the framework does by default (as the public validation sources ran it)
// and its fixed per-op / per-iteration host costs. Sources are cited in framework_preset.cpp
// and scenarios/README.md "Gradient bucketing".

#include "calibration/fixed_costs.hpp"
#include "sim/collective_config.hpp"

namespace scalecast::sim {

// `base` with the framework's bucketing (fusion size, cycle time, rule, first bucket, hand-over);
// algorithm, library, inter-node stage and chunks are left as they are. kNone returns `base`.
AllReduceConfig framework_bucketing(calibration::Framework f, AllReduceConfig base);

// PyTorch DistributedDataParallel defaults.
inline constexpr double kDdpBucketCapBytes = 25.0 * 1024 * 1024;   // bucket_cap_mb = 25
inline constexpr double kDdpFirstBucketBytes = 1.0 * 1024 * 1024;  // _DEFAULT_FIRST_BUCKET_BYTES
// Horovod before v0.21 (horovod/horovod PR #2468, merged 2020-11-19, changed them to 128 MiB
// and 1 ms): HOROVOD_FUSION_THRESHOLD 64 MiB, HOROVOD_CYCLE_TIME 5 ms.
inline constexpr double kHorovodFusionBytes = 64.0 * 1024 * 1024;
inline constexpr double kHorovodLegacyCycle_s = 5e-3;
// NVIDIA's MLPerf MXNet ResNet: HOROVOD_CYCLE_TIME=0.1 (ms), HOROVOD_FUSION_THRESHOLD=67108864.
// The preset does not replay this cycle (framework_preset.cpp says why); it is the value for
// `allreduce.cycle_time` when one wants it replayed.
inline constexpr double kMlperfMxnetCycle_s = 0.1e-3;

}  // namespace scalecast::sim
