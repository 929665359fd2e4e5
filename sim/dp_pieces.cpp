// cut_dp_pieces(): a chunk's DP collectives by when the pipeline job launches them (dp_pieces.hpp).

#include "sim/dp_pieces.hpp"

#include <algorithm>
#include <string_view>

namespace scalecast::sim {
namespace {

// `c` split over `segs` by compute time into `out` (one list per segment).
void split(const std::vector<PricedSegment>& segs, const models::LlmComm& c, CommPieces& out) {
  out.resize(std::max<std::size_t>(1, segs.size()));
  double total = 0.0;
  for (const PricedSegment& g : segs) total += g.compute_s;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const double w = total > 0.0 ? segs[k].compute_s / total : 1.0 / out.size();
    if (w <= 0.0) continue;
    models::LlmComm piece = c;
    piece.bytes *= w;
    piece.full_bytes *= w;
    out[k].push_back(piece);
  }
}

}  // namespace

DpPieces cut_dp_pieces(const PricedChunk& pc) {
  DpPieces pieces;
  for (const models::LlmComm& c : pc.dp_comms) {
    const bool gather = c.kind == models::CommKind::kAllGather;
    if (c.pipelined_fsdp) {
      if (gather)
        split(pc.forward, c, pieces.gather_first);
      else
        split(pc.backward, c, pieces.grad_last);
    } else if (!gather) {
      split(pc.backward, c, c.per_micro_batch ? pieces.grad_per_mb : pieces.grad);
    } else if (!c.per_micro_batch) {
      split(pc.forward, c, pieces.gather_step);
    } else {
      const bool bwd = std::string_view(c.name).ends_with("backward");
      split(bwd ? pc.backward : pc.forward, c, bwd ? pieces.gather_bwd : pieces.gather_fwd);
    }
  }
  return pieces;
}

}  // namespace scalecast::sim
