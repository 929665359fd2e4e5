#include "sim/rank_layout.hpp"

#include <stdexcept>

namespace scalecast::sim {
namespace {

int index_of(models::ParallelDim d) {
  switch (d) {
    case models::ParallelDim::kTp:
      return 0;
    case models::ParallelDim::kCp:
      return 1;
    case models::ParallelDim::kDp:
      return 2;
    case models::ParallelDim::kPp:
      return 3;
  }
  return 0;
}

int get(const RankCoord& c, int i) {
  const int v[4] = {c.tp, c.cp, c.dp, c.pp};
  return v[i];
}

}  // namespace

RankLayout::RankLayout(const models::ParallelConfig& config) {
  size_[0] = config.tp;
  size_[1] = config.cp;
  size_[2] = config.dp;
  size_[3] = config.pp;
  for (int s : size_)
    if (s < 1) throw std::invalid_argument("rank layout: every parallel size must be >= 1");
  if (config.order.size() != 4)
    throw std::invalid_argument("rank layout: order must list tp, cp, dp and pp once each");
  bool seen[4] = {false, false, false, false};
  int stride = 1;
  for (models::ParallelDim d : config.order) {
    const int i = index_of(d);
    if (seen[i]) throw std::invalid_argument("rank layout: order lists a dimension twice");
    seen[i] = true;
    stride_[i] = stride;
    stride *= size_[i];
  }
}

int RankLayout::rank_of(const RankCoord& c) const {
  int r = 0;
  for (int i = 0; i < 4; ++i) r += get(c, i) * stride_[i];
  return r;
}

RankCoord RankLayout::coord_of(int rank) const {
  int v[4];
  for (int i = 0; i < 4; ++i) v[i] = (rank / stride_[i]) % size_[i];
  return {v[0], v[1], v[2], v[3]};
}

std::vector<int> RankLayout::group(models::ParallelDim dim, const RankCoord& base) const {
  const int i = index_of(dim);
  std::vector<int> out;
  RankCoord c = base;
  for (int k = 0; k < size_[i]; ++k) {
    (i == 0 ? c.tp : i == 1 ? c.cp : i == 2 ? c.dp : c.pp) = k;
    out.push_back(rank_of(c));
  }
  return out;
}

}  // namespace scalecast::sim
