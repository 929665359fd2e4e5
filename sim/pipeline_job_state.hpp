#pragma once
// Internal to pipeline_job*.cpp: the shared state of one pipeline job's actors
// (sim/pipeline_job.hpp). pipeline_job.cpp places the job and builds its groups;
// pipeline_job_actors.cpp is what the stage, DP-stream and barrier actors do.

#include <simgrid/s4u.hpp>

#include <array>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "sim/communicator.hpp"
#include "sim/dp_pieces.hpp"
#include "sim/pipeline_job.hpp"
#include "sim/pipeline_schedule.hpp"
#include "sim/rank_layout.hpp"

namespace scalecast::sim {

namespace sg4 = simgrid::s4u;

struct PipelineJob::State {
  PipelineJobSpec spec;
  int pp = 1, v = 1, m = 1, chunks = 1, total_iterations = 1;
  int reps = 1;  // DP replicas simulated
  RankLayout layout;
  std::vector<sg4::Host*> stage_host;                   // per slot
  std::vector<std::unique_ptr<Communicator>> tp, cp;    // per slot
  std::vector<std::unique_ptr<Communicator>> dp, dpcp;  // per stage
  std::vector<std::vector<PipelineTask>> order;         // per stage
  std::vector<sg4::Mailbox*> fwd_in, bwd_in;            // per replica x global chunk
  std::vector<std::vector<int>> group_ranks;            // per slot, its TP x CP ranks (variability)
  std::vector<double> stretch;                          // per slot, this iteration's compute factor
  // The data-parallel stream of a stage: collectives in launch order, each started when every
  // simulated replica has launched it.
  struct DpStream {
    struct Item {
      const models::LlmComm* comm;  // nullptr: stop
      int arrivals;
    };
    std::vector<Item> items;
    std::size_t next = 0;
    std::vector<int> posted, pushed;  // per replica: items, and items but the stop
    int done = 0;
    sg4::MutexPtr mutex = sg4::Mutex::create();
    sg4::ConditionVariablePtr cv = sg4::ConditionVariable::create();
  };
  std::vector<DpStream> dp_stream;
  std::vector<DpPieces> pieces;  // per chunk (dp_pieces.hpp)
  // The iteration barrier.
  int arrived = 0, barrier_epoch = 0;
  sg4::MutexPtr barrier_mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr barrier_cv = sg4::ConditionVariable::create();
  std::vector<double> iteration_end;  // per iteration (warm-up included)
  double start_s = 0.0;               // simulated time the job was created (a mix's start)
  std::vector<StageBreakdown> acc;    // per stage, measured iterations and replicas summed
  std::map<std::string, double> bytes;
  std::vector<StageInterval> intervals;

  // A process group's name in the byte counts and trace, and its exposed-time term.
  struct GroupTerm {
    const char* name;
    double StageBreakdown::*exposed;
  };
  static GroupTerm term_of(models::CommGroup g) {
    switch (g) {
      case models::CommGroup::kTp:
        return {"tp", &StageBreakdown::exposed_tp_s};
      case models::CommGroup::kCp:
        return {"cp", &StageBreakdown::exposed_cp_s};
      case models::CommGroup::kDp:
      case models::CommGroup::kDpCp:
        return {"dp", &StageBreakdown::exposed_dp_s};
      case models::CommGroup::kPp:
        return {"pp", &StageBreakdown::exposed_pp_s};
    }
    return {"?", &StageBreakdown::exposed_pp_s};
  }
  static const char* group_name(models::CommGroup g) { return term_of(g).name; }
  // The call's buffer as the Collective classes take it: the whole tensor (all-gather: the
  // gathered output), per transfer for a ring exchange.
  static double call_bytes(const models::LlmComm& c) {
    return c.full_bytes > 0.0 ? c.full_bytes : c.bytes;
  }

  // Out of memory inside an actor: an exception there ended the process with SIGABRT (exit 4
  // and no message). The actor records it and stops the job; result() rethrows it.
  std::exception_ptr failure;
  void guarded(const std::function<void()>& body) {
    try {
      body();
    } catch (const std::bad_alloc&) {
      if (!failure) failure = std::current_exception();
      sg4::Actor::kill_all();
    }
  }

  explicit State(PipelineJobSpec s) : spec(std::move(s)), layout(spec.parallel) {}

  bool measured(int it) const { return it >= spec.warmup; }
  bool traced(int it) const { return it == total_iterations - 1; }
  int stage_of(int slot) const { return slot % pp; }
  int replica_of(int slot) const { return slot / pp; }
  StageBreakdown& acc_of(int slot) { return acc[static_cast<std::size_t>(stage_of(slot))]; }
  // The trace and the byte counts follow replica 0.
  void record(int slot, const char* track, int it, double t0, const std::string& name) {
    if (traced(it) && replica_of(slot) == 0)
      intervals.push_back({slot, track, it, t0, sg4::Engine::get_clock(), name});
  }

  void add_wait(int slot, models::CommGroup g, int it, double waited) {
    if (measured(it)) acc_of(slot).*term_of(g).exposed += waited;
  }

  // TP / CP groups that fill their node on their own: nothing else of the job crosses their
  // links (p2p and DP go through the NICs), so a call of a size seen before takes the time it
  // took then; it is replayed as that duration instead of its flows (the first call of each
  // kind, size and step count per stage is simulated as flows).
  std::vector<std::array<bool, 2>> private_tp_cp;                         // per slot
  std::vector<std::map<std::tuple<int, int, double, int>, double>> memo;  // per slot
  bool private_group(int slot, models::CommGroup g) const {
    const auto& f = private_tp_cp[static_cast<std::size_t>(slot)];
    return g == models::CommGroup::kTp ? f[0] : g == models::CommGroup::kCp ? f[1] : false;
  }
  static std::tuple<int, int, double, int> memo_key(const models::LlmComm& c) {
    return {static_cast<int>(c.group), static_cast<int>(c.kind), call_bytes(c), c.steps};
  }
  const double* recall(int slot, const models::LlmComm& c) const {
    if (!private_group(slot, c.group)) return nullptr;
    const auto& known = memo[static_cast<std::size_t>(slot)];
    const auto hit = known.find(memo_key(c));
    return hit == known.end() ? nullptr : &hit->second;
  }
  void remember(int slot, const models::LlmComm& c, double duration_s) {
    memo[static_cast<std::size_t>(slot)].emplace(memo_key(c), duration_s);
  }

  Communicator& comm_of(int slot, models::CommGroup g) {
    const auto s = static_cast<std::size_t>(slot);
    const auto st = static_cast<std::size_t>(stage_of(slot));
    switch (g) {
      case models::CommGroup::kCp:
        return *cp[s];
      case models::CommGroup::kDp:
        return *dp[st];
      case models::CommGroup::kDpCp:
        return *dpcp[st];
      default:
        return *tp[s];
    }
  }

  // Bytes put on the wire by every GPU of the job for one call of `c` on this stage's group.
  void count_bytes(int slot, const models::LlmComm& c, int it) {
    if (!measured(it) || replica_of(slot) != 0) return;
    const Communicator& comm = comm_of(slot, c.group);
    const int n = comm.size();
    if (n <= 1) return;
    const double per_member =
        collective_for(c.kind).bytes_sent_per_member(n, call_bytes(c), c.steps);
    const auto& p = spec.parallel;
    const double groups = static_cast<double>(p.tp) * p.cp * p.dp / n;  // of this stage
    bytes[group_name(c.group)] += per_member * n * groups / spec.iterations;
  }

  // Runs a pass's segments: compute, then its collectives (overlappable ones under the next
  // segment's compute when the TP overlap switch is on).
  void run_segments(int slot, int it, const std::vector<PricedSegment>& segs,
                    const std::string& label,
                    const std::function<void(std::size_t)>& before = nullptr,
                    const std::function<void(std::size_t)>& after = nullptr);

  // Waits for input on `box`; the wait before the producer sent is bubble, after it exposed PP.
  void receive(int slot, int it, sg4::Mailbox* box, const std::string& label);

  void send(int slot, int it, sg4::Mailbox* box, double bytes_sent);

  DpStream& stream_of(int slot) { return dp_stream[static_cast<std::size_t>(stage_of(slot))]; }
  int& pushed_of(int slot) {
    return stream_of(slot).pushed[static_cast<std::size_t>(replica_of(slot))];
  }

  // Every replica launches its stage's DP collectives in the same order (one program).
  void push_dp(int slot, const models::LlmComm* c);

  // Blocks until the stage's DP stream has finished `target` collectives; exposed DP time.
  void wait_dp(int slot, int it, int target);

  void dp_main(int stage);

  void barrier(int slot, int it);

  // Pushes a list of DP pieces; returns the stream target that covers them (0: nothing).
  int push_all(int slot, const std::vector<models::LlmComm>& list) {
    for (const models::LlmComm& c : list) push_dp(slot, &c);
    return list.empty() ? 0 : pushed_of(slot);
  }

  // The mailbox of a chunk's input in the slot's replica.
  sg4::Mailbox* inbox(std::vector<sg4::Mailbox*>& boxes, int slot, int chunk) const {
    return boxes[static_cast<std::size_t>(replica_of(slot) * chunks + chunk)];
  }

  // The slot's compute factor in iteration `it`: its TP x CP group waits for its slowest rank.
  double draw_stretch(int slot, int it) const {
    if (!spec.variability.varied()) return 1.0;
    double f = 0.0;
    for (int rank : group_ranks[static_cast<std::size_t>(slot)])
      f = std::max(f, spec.variability.stretch(rank, it));
    return f;
  }

  void stage_main(int slot);
};

}  // namespace scalecast::sim
