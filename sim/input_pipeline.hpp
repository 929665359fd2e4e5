#pragma once
// The input pipeline of one rank: batches are read from storage (the node's NVMe disk or the
// parallel file system), decoded and augmented on the rank's CPU cores and copied host to device,
// as three stages that each work on one batch at a time and may run up to `prefetch_depth`
// batches ahead of compute. Compute of iteration i starts only when batch i is on the GPU; the
// time it waits is the breakdown's I/O stall. `source: memory` without a decode stage is the
// engine's original input model (a host-to-device copy per batch, overlapping compute with
// prefetch), kept bit for bit.

#include <optional>
#include <string_view>

namespace scalecast::sim {

enum class InputSource { kMemory, kNvme, kPfs };

std::string_view to_string(InputSource s);
std::optional<InputSource> parse_input_source(std::string_view text);

// DALI's `prefetch_queue_depth` defaults to 2 batches (nvidia.dali.Pipeline, "prefetch_queue_depth
// (int, optional, default = 2)"); PyTorch's DataLoader prefetches `prefetch_factor` = 2 batches
// per worker. Two batches ahead is the usual loader.
inline constexpr int kDefaultPrefetchDepth = 2;

struct InputPipelineSpec {
  InputSource source = InputSource::kMemory;
  double stored_bytes_per_sample = 0.0;        // bytes read from storage per sample (not memory)
  double decode_samples_per_s = 0.0;           // per CPU core, decode + augmentation; 0: no decode
  double decode_cores = 1.0;                   // CPU cores per rank working on decode
  int prefetch_depth = kDefaultPrefetchDepth;  // batches the pipeline may run ahead of compute

  // False: the original model (memory, no decode), replayed as before.
  bool staged() const { return source != InputSource::kMemory || decode_samples_per_s > 0.0; }
  // Decode time of one batch of `batch` samples on the rank's cores (0 without decode).
  double decode_s(int batch) const {
    return decode_samples_per_s > 0.0 ? batch / (decode_samples_per_s * decode_cores) : 0.0;
  }
};

}  // namespace scalecast::sim
