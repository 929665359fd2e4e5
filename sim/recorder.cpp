#include "sim/recorder.hpp"

#include <algorithm>
#include <utility>

namespace scalecast::sim {

const char* to_string(LinkClass c) {
  switch (c) {
    case LinkClass::kIntraNode:
      return "intra_node";
    case LinkClass::kInterNode:
      return "inter_node";
    case LinkClass::kHostDevice:
      return "host_device";
    case LinkClass::kStorage:
      return "storage";
  }
  return "?";
}

void Recorder::add_bytes(LinkClass c, double bytes, double multiplicity) {
  bytes_[static_cast<int>(c)] += bytes * multiplicity;
}

void Recorder::mark_iteration(int iteration, double start_s, double end_s, int buckets) {
  marks_.push_back({iteration, start_s, end_s, buckets});
}

namespace {

// Length of the union of [start, end) intervals, clipped to [lo, hi).
double covered(std::vector<std::pair<double, double>> spans, double lo, double hi) {
  std::sort(spans.begin(), spans.end());
  double total = 0.0, cur_s = 0.0, cur_e = -1.0;
  bool open = false;
  for (auto [s, e] : spans) {
    s = std::max(s, lo);
    e = std::min(e, hi);
    if (e <= s) continue;
    if (open && s <= cur_e) {
      cur_e = std::max(cur_e, e);
    } else {
      if (open) total += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
      open = true;
    }
  }
  if (open) total += cur_e - cur_s;
  return total;
}

using Spans = std::vector<std::pair<double, double>>;

// Union of a and b.
double covered_union(const Spans& a, const Spans& b, double lo, double hi) {
  Spans all = a;
  all.insert(all.end(), b.begin(), b.end());
  return covered(std::move(all), lo, hi);
}

}  // namespace

std::vector<IterationRecord> Recorder::iterations() const {
  std::vector<IterationRecord> out;
  for (const Mark& m : marks_) {
    if (m.iteration < warmup_) continue;
    Spans streams[kTrackCount];
    Spans kernels;  // compute-stream intervals other than the fixed host time
    for (const Interval& iv : intervals_)
      if (iv.rank == 0 && iv.end_s > m.start_s && iv.start_s < m.end_s) {
        streams[static_cast<int>(iv.stream)].push_back({iv.start_s, iv.end_s});
        if (iv.stream == Stream::kCompute && iv.tier != kFixedTier)
          kernels.push_back({iv.start_s, iv.end_s});
      }
    const Spans& compute = streams[static_cast<int>(Stream::kCompute)];
    const Spans& comm = streams[static_cast<int>(Stream::kComm)];
    const Spans& copy = streams[static_cast<int>(Stream::kCopy)];
    IterationRecord r;
    r.iteration = m.iteration;
    r.start_s = m.start_s;
    r.end_s = m.end_s;
    r.buckets = m.buckets;
    const double len = m.end_s - m.start_s;
    const double c = covered(compute, m.start_s, m.end_s);
    const double c_or_comm = covered_union(compute, comm, m.start_s, m.end_s);
    Spans cc = compute;
    cc.insert(cc.end(), comm.begin(), comm.end());
    const double all = covered_union(cc, copy, m.start_s, m.end_s);
    // The fixed per-iteration host time holds the compute stream (nothing else runs on it) but
    // is not GPU work: its own term, so compute + fixed is the stream's busy time.
    r.breakdown.compute_s = covered(kernels, m.start_s, m.end_s);
    r.breakdown.fixed_s = c - r.breakdown.compute_s;
    r.breakdown.exposed_comm_s = c_or_comm - c;
    r.breakdown.copy_s = all - c_or_comm;
    // I/O stall: the compute stream waiting for its batch, where no GPU stream is busy (the
    // batch's own host-to-device copy at the end of a stall counts as copy).
    Spans stall;
    for (const Stall& st : stalls_)
      if (st.rank == 0 && st.end_s > m.start_s && st.start_s < m.end_s)
        stall.push_back({st.start_s, st.end_s});
    Spans gpu = cc;
    gpu.insert(gpu.end(), copy.begin(), copy.end());
    const double with_stall = stall.empty() ? all : covered_union(gpu, stall, m.start_s, m.end_s);
    r.breakdown.io_stall_s = with_stall - all;
    r.breakdown.idle_s = std::max(0.0, len - with_stall);
    r.comm_total_s = covered(comm, m.start_s, m.end_s);
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const IterationRecord& a, const IterationRecord& b) {
    return a.iteration < b.iteration;
  });
  return out;
}

std::map<std::string, double> Recorder::bytes_per_iteration() const {
  std::map<std::string, double> out;
  const int total_iterations = std::max(1, warmup_ + iterations_);
  for (int c = 0; c < 3; ++c)
    out[to_string(static_cast<LinkClass>(c))] = bytes_[c] / total_iterations;
  if (bytes_[3] > 0.0) out[to_string(LinkClass::kStorage)] = bytes_[3] / total_iterations;
  return out;
}

}  // namespace scalecast::sim
