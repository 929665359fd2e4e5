#pragma once
// Where the ranks of an LLM job are: rank r's coordinates (tp, cp, dp, pp) follow the
// configuration's `order` (innermost first; Megatron's default tp, cp, dp, pp), and rank r runs
// on the r-th GPU of the job (GPUs numbered node by node over the job's nodes). Process groups
// (TP, CP, DP, PP) are the ranks that differ only in that coordinate; their collectives run on
// the routes between those GPUs.

#include <vector>

#include "models/parallel_config.hpp"

namespace scalecast::sim {

struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;
};

class RankLayout {
 public:
  // Throws std::invalid_argument for an `order` that is not a permutation of tp, cp, dp, pp or
  // a non-positive size.
  explicit RankLayout(const models::ParallelConfig& config);

  int ranks() const { return size_[0] * size_[1] * size_[2] * size_[3]; }
  int rank_of(const RankCoord& c) const;
  RankCoord coord_of(int rank) const;
  // The ranks of `base`'s group along `dim`, in group order (coordinate 0, 1, ...).
  std::vector<int> group(models::ParallelDim dim, const RankCoord& base) const;

 private:
  // Per dimension (tp, cp, dp, pp): its size and its stride in the rank number.
  int size_[4] = {1, 1, 1, 1};
  int stride_[4] = {1, 1, 1, 1};
};

// The job-local node and local GPU of a rank when every node runs `gpus_per_node` ranks.
struct GpuSlot {
  int node = 0;   // index into the job's node list
  int local = 0;  // local GPU
};
inline GpuSlot slot_of(int rank, int gpus_per_node) {
  return {rank / gpus_per_node, rank % gpus_per_node};
}

}  // namespace scalecast::sim
