// Task orders of the pipeline schedules (Megatron-LM's schedules.py): every forward and
// backward of every chunk and micro-batch once, warm-up counts, and the interleaved order.

#include <doctest/doctest.h>

#include <set>
#include <stdexcept>
#include <tuple>

#include "sim/pipeline_schedule.hpp"

using namespace scalecast;
using namespace scalecast::sim;

namespace {

std::string render(const std::vector<PipelineTask>& tasks) {
  std::string s;
  for (const PipelineTask& t : tasks) {
    s.push_back(t.forward ? 'F' : 'B');
    s.append(std::to_string(t.chunk)).append(".").append(std::to_string(t.microbatch)).append(" ");
  }
  return s;
}

void check_complete(models::PipelineSchedule sched, int p, int v, int m) {
  for (int rank = 0; rank < p; ++rank) {
    const auto tasks = stage_order(sched, p, v, m, rank);
    std::set<std::tuple<bool, int, int>> seen;
    for (const PipelineTask& t : tasks) {
      CHECK(t.chunk % p == rank);
      CHECK(seen.insert({t.forward, t.chunk, t.microbatch}).second);
      if (!t.forward) CHECK(seen.count({true, t.chunk, t.microbatch}) == 1);
    }
    CHECK(tasks.size() == static_cast<std::size_t>(2 * m * v));
  }
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("schedule: 1F1B warms up p - rank - 1 forwards, then alternates") {
    CHECK(render(stage_order(models::PipelineSchedule::k1F1B, 4, 1, 6, 0)) ==
          "F0.0 F0.1 F0.2 F0.3 B0.0 F0.4 B0.1 F0.5 B0.2 B0.3 B0.4 B0.5 ");
    CHECK(render(stage_order(models::PipelineSchedule::k1F1B, 4, 1, 3, 3)) ==
          "F3.0 B3.0 F3.1 B3.1 F3.2 B3.2 ");
    check_complete(models::PipelineSchedule::k1F1B, 4, 1, 6);
    check_complete(models::PipelineSchedule::k1F1B, 8, 1, 3);  // fewer micro-batches than stages
  }
  TEST_CASE("schedule: GPipe runs every forward, then every backward") {
    CHECK(render(stage_order(models::PipelineSchedule::kGPipe, 2, 1, 3, 1)) ==
          "F1.0 F1.1 F1.2 B1.0 B1.1 B1.2 ");
  }
  TEST_CASE("schedule: interleaved 1F1B visits chunks in groups of p micro-batches") {
    // p 2, v 2, m 4, rank 0: warm-up (2-0-1)*2 + (2-1)*2 = 4 forwards; backwards start with the
    // last chunk.
    CHECK(render(stage_order(models::PipelineSchedule::kInterleaved1F1B, 2, 2, 4, 0)) ==
          "F0.0 F0.1 F2.0 F2.1 F0.2 B2.0 F0.3 B2.1 F2.2 B0.0 F2.3 B0.1 B2.2 B2.3 B0.2 B0.3 ");
    check_complete(models::PipelineSchedule::kInterleaved1F1B, 4, 3, 8);
    check_complete(models::PipelineSchedule::kInterleaved1F1B, 4, 2, 4);  // m == p: all warm-up
    CHECK_THROWS_AS(stage_order(models::PipelineSchedule::kInterleaved1F1B, 4, 2, 6, 0),
                    std::invalid_argument);
  }
}
