#include "sim/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace scalecast::sim {

std::vector<PipelineTask> stage_order(models::PipelineSchedule schedule, int pp, int virtual_stages,
                                      int m, int rank) {
  if (pp < 1 || m < 1 || virtual_stages < 1 || rank < 0 || rank >= pp)
    throw std::invalid_argument(
        "pipeline schedule: need pp >= 1, micro-batches >= 1, "
        "virtual stages >= 1 and 0 <= rank < pp");
  std::vector<PipelineTask> out;
  const int v = schedule == models::PipelineSchedule::kInterleaved1F1B ? virtual_stages : 1;
  if (schedule != models::PipelineSchedule::kInterleaved1F1B && virtual_stages != 1)
    throw std::invalid_argument(
        "pipeline schedule: virtual stages > 1 need the interleaved "
        "schedule");
  if (schedule == models::PipelineSchedule::kGPipe) {
    for (int i = 0; i < m; ++i) out.push_back({true, rank, i});
    for (int i = 0; i < m; ++i) out.push_back({false, rank, i});
    return out;
  }
  if (v == 1) {  // 1F1B (Megatron's forward_backward_pipelining_without_interleaving)
    const int warmup = std::min(pp - rank - 1, m);
    int f = 0, b = 0;
    for (; f < warmup; ++f) out.push_back({true, rank, f});
    for (int k = 0; k < m - warmup; ++k) {
      out.push_back({true, rank, f++});
      out.push_back({false, rank, b++});
    }
    for (; b < m; ++b) out.push_back({false, rank, b});
    return out;
  }
  // Interleaved: virtual iteration k covers chunk (k mod (pp v)) / pp, micro-batch
  // (k / (pp v)) pp + k mod pp; backwards visit the chunks in reverse.
  if (m % pp != 0)
    throw std::invalid_argument("interleaved pipeline schedule: the micro-batches (" +
                                std::to_string(m) + ") must be a multiple of pp (" +
                                std::to_string(pp) + ")");
  const int total = m * v;
  const auto local_chunk = [&](int k, bool forward) {
    const int c = (k % (pp * v)) / pp;
    return forward ? c : v - 1 - c;
  };
  const auto mb = [&](int k) { return (k / (pp * v)) * pp + k % pp; };
  const auto task = [&](int k, bool forward) {
    return PipelineTask{forward, local_chunk(k, forward) * pp + rank, mb(k)};
  };
  int warmup = total;  // m == pp: all forwards first, then all backwards
  if (m != pp) warmup = std::min(total, (pp - rank - 1) * 2 + (v - 1) * pp);
  for (int k = 0; k < warmup; ++k) out.push_back(task(k, true));
  for (int k = 0; k < total - warmup; ++k) {
    out.push_back(task(k + warmup, true));
    out.push_back(task(k, false));
  }
  for (int k = total - warmup; k < total; ++k) out.push_back(task(k, false));
  return out;
}

}  // namespace scalecast::sim
