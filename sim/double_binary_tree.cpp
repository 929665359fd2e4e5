#include "sim/double_binary_tree.hpp"

namespace scalecast::sim {

TreeLinks nccl_btree(int n, int rank) {
  // ncclGetBtree: `bit` is the lowest set bit of the rank; the parent clears it and sets the
  // next one (or only clears it past the end); children sit bit/2 below and above.
  TreeLinks t;
  int bit = 1;
  while (bit < n && !(bit & rank)) bit <<= 1;
  if (rank == 0) {
    t.children[1] = n > 1 ? bit >> 1 : -1;
    return t;
  }
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  t.parent = up;
  int lowbit = bit >> 1;
  t.children[0] = lowbit == 0 ? -1 : rank - lowbit;
  int down1 = lowbit == 0 ? -1 : rank + lowbit;
  while (down1 >= n) {
    down1 = lowbit == 0 ? -1 : rank + lowbit;
    lowbit >>= 1;
  }
  t.children[1] = down1;
  return t;
}

std::array<TreeLinks, 2> nccl_double_tree(int n, int rank) {
  std::array<TreeLinks, 2> t;
  t[0] = nccl_btree(n, rank);
  // ncclGetDtree: shift by one for odd n, mirror for even n.
  const bool shift = n % 2 == 1;
  const auto to_tree = [&](int r) { return shift ? (r - 1 + n) % n : n - 1 - r; };
  const auto from_tree = [&](int r) { return r == -1 ? -1 : shift ? (r + 1) % n : n - 1 - r; };
  const TreeLinks b = nccl_btree(n, to_tree(rank));
  t[1].parent = from_tree(b.parent);
  t[1].children = {from_tree(b.children[0]), from_tree(b.children[1])};
  return t;
}

int nccl_tree_depth(int n) {
  // The root's one child is the largest power of two below n, whose subtree is complete down
  // to the odd ranks: 1 + log2 of that power.
  if (n <= 1) return 0;
  int depth = 1;
  for (int p = 1; 2 * p < n; p <<= 1) ++depth;
  return depth;
}

}  // namespace scalecast::sim
