#pragma once
// A pipeline chunk's data-parallel collectives cut into one piece per segment, in proportion to
// the segments' compute time (a proxy for their parameters), as Megatron and FSDP launch them per
// bucket / per layer so that they overlap the rest of the pass (sim/README.md "LLM pipeline
// job"). SimGrid-free.

#include <vector>

#include "models/llm_step.hpp"
#include "sim/pipeline_job.hpp"

namespace scalecast::sim {

using CommPieces = std::vector<std::vector<models::LlmComm>>;  // per segment

struct DpPieces {
  // Gradient reductions launched after each backward segment: of the chunk's last micro-batch
  // (grad), of every micro-batch (grad_per_mb, ZeRO 2/3 at pp 1).
  CommPieces grad, grad_per_mb;
  // Per-micro-batch parameter gathers (ZeRO 3 at pp 1) before each forward / backward segment.
  CommPieces gather_fwd, gather_bwd;
  // ZeRO-1/2 parameter gathers after the optimizer, one piece per forward segment: segment k of
  // the chunk's first forward of the next iteration waits for piece k.
  CommPieces gather_step;
  // ZeRO 3 under a pipeline schedule (LlmComm::pipelined_fsdp): the gathers of the forward
  // segments of the chunk's first micro-batch, and the reductions launched together after its
  // last backward.
  CommPieces gather_first, grad_last;
};

// The pieces of `chunk`'s dp_comms. A piece carries its segment's share of bytes and full_bytes;
// a segment without compute gets none (all segments share equally when none has compute).
DpPieces cut_dp_pieces(const PricedChunk& chunk);

}  // namespace scalecast::sim
