#pragma once
// NCCL's double binary tree (src/graph/trees.cc, NCCL v2.21.5-1): the first tree is an in-order
// binary tree over ranks 0..n-1 whose leaves are the odd ranks (ncclGetBtree); the second is the
// first mirrored (n even) or shifted by one (n odd) (ncclGetDtree), so a rank that is an inner
// node of one tree is a leaf of the other. Each tree carries half of the buffer, so each
// participant sends and receives about the whole buffer once per phase (reduce, broadcast):
// about ring bandwidth, with a latency in log2(n) instead of n. SimGrid-free.

#include <array>

namespace scalecast::sim {

struct TreeLinks {
  int parent = -1;                      // -1 at the root
  std::array<int, 2> children{-1, -1};  // -1 where absent
};

// Rank `rank`'s links in ncclGetBtree's tree of `n` ranks (root 0).
TreeLinks nccl_btree(int n, int rank);
// Rank `rank`'s links in both trees of ncclGetDtree.
std::array<TreeLinks, 2> nccl_double_tree(int n, int rank);
// Edges from the root to the deepest rank of nccl_btree(n) (the second tree's is the same);
// 0 for n <= 1.
int nccl_tree_depth(int n);

}  // namespace scalecast::sim
