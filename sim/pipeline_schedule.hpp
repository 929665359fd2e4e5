#pragma once
// The order in which one pipeline rank runs the forward and backward passes of its model chunks
// over the micro-batches of an iteration, as Megatron-LM's schedules run them (GPipe: all
// forwards, then all backwards; 1F1B: p - rank - 1 warm-up forwards, then one forward one
// backward, then the cool-down backwards; interleaved 1F1B: the same over v chunks per rank, in
// groups of p micro-batches per chunk). This is only the order: when each task may start (its
// input from the neighbouring stage) is what the pipeline job simulates, so the bubble comes out
// of the simulation, not out of a formula.

#include <string>
#include <vector>

#include "models/parallel_config.hpp"

namespace scalecast::sim {

struct PipelineTask {
  bool forward = true;
  int chunk = 0;       // global model chunk (0 .. pp * v - 1); runs on rank chunk % pp
  int microbatch = 0;  // 0 .. m - 1
};

// Tasks of pipeline rank `rank` (0 .. pp - 1) for `microbatches` micro-batches and
// `virtual_stages` chunks per rank. Throws std::invalid_argument for counts the schedule cannot
// run (interleaved: m not a multiple of pp; any: m < 1).
std::vector<PipelineTask> stage_order(models::PipelineSchedule schedule, int pp, int virtual_stages,
                                      int microbatches, int rank);

}  // namespace scalecast::sim
