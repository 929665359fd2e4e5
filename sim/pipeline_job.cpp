// The pipeline job's actors: one per pipeline stage running its schedule, one per stage for its
// data-parallel communication stream, and the iteration barrier (sim/pipeline_job.hpp).

#include "sim/pipeline_job.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <array>
#include <deque>
#include <set>
#include <stdexcept>
#include <tuple>

#include "sim/communicator.hpp"
#include "sim/dp_pieces.hpp"
#include "sim/pipeline_schedule.hpp"
#include "sim/rank_layout.hpp"
#include "sim/simulated_platform.hpp"

namespace sg4 = simgrid::s4u;

namespace scalecast::sim {
namespace {

const char* group_name(models::CommGroup g) {
  switch (g) {
    case models::CommGroup::kTp:
      return "tp";
    case models::CommGroup::kCp:
      return "cp";
    case models::CommGroup::kDp:
    case models::CommGroup::kDpCp:
      return "dp";
    case models::CommGroup::kPp:
      return "pp";
  }
  return "?";
}

// The call's buffer as the Collective classes take it: the whole tensor (all-gather: the gathered
// output), per transfer for a ring exchange.
double call_bytes(const models::LlmComm& c) { return c.full_bytes > 0.0 ? c.full_bytes : c.bytes; }

}  // namespace

struct PipelineJob::State {
  PipelineJobSpec spec;
  int pp = 1, v = 1, m = 1, chunks = 1, total_iterations = 1;
  RankLayout layout;
  std::vector<sg4::Host*> stage_host;
  std::vector<std::unique_ptr<Communicator>> tp, cp, dp, dpcp;  // per stage
  std::vector<std::vector<PipelineTask>> order;                 // per stage
  std::vector<sg4::Mailbox*> fwd_in, bwd_in;                    // per global chunk
  // The data-parallel stream of a stage: collectives in launch order.
  struct DpStream {
    std::deque<const models::LlmComm*> queue;  // nullptr: stop
    int pushed = 0, done = 0;
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
  std::vector<StageBreakdown> acc;    // per stage, measured iterations summed
  std::map<std::string, double> bytes;
  std::vector<StageInterval> intervals;

  explicit State(PipelineJobSpec s) : spec(std::move(s)), layout(spec.parallel) {}

  bool measured(int it) const { return it >= spec.warmup; }
  bool traced(int it) const { return it == total_iterations - 1; }
  void record(int stage, const char* track, int it, double t0, const std::string& name) {
    if (traced(it)) intervals.push_back({stage, track, it, t0, sg4::Engine::get_clock(), name});
  }

  void add_wait(int stage, models::CommGroup g, int it, double waited) {
    if (!measured(it)) return;
    StageBreakdown& b = acc[static_cast<std::size_t>(stage)];
    switch (g) {
      case models::CommGroup::kTp:
        b.exposed_tp_s += waited;
        break;
      case models::CommGroup::kCp:
        b.exposed_cp_s += waited;
        break;
      case models::CommGroup::kDp:
      case models::CommGroup::kDpCp:
        b.exposed_dp_s += waited;
        break;
      case models::CommGroup::kPp:
        b.exposed_pp_s += waited;
        break;
    }
  }

  // TP / CP groups that fill their node on their own: nothing else of the job crosses their
  // links (p2p and DP go through the NICs), so a call of a size seen before takes the time it
  // took then; it is replayed as that duration instead of its flows (the first call of each
  // kind, size and step count per stage is simulated as flows).
  std::vector<std::array<bool, 2>> private_tp_cp;                         // per stage
  std::vector<std::map<std::tuple<int, int, double, int>, double>> memo;  // per stage
  bool private_group(int stage, models::CommGroup g) const {
    const auto& f = private_tp_cp[static_cast<std::size_t>(stage)];
    return g == models::CommGroup::kTp ? f[0] : g == models::CommGroup::kCp ? f[1] : false;
  }
  static std::tuple<int, int, double, int> memo_key(const models::LlmComm& c) {
    return {static_cast<int>(c.group), static_cast<int>(c.kind), call_bytes(c), c.steps};
  }
  const double* recall(int stage, const models::LlmComm& c) const {
    if (!private_group(stage, c.group)) return nullptr;
    const auto& known = memo[static_cast<std::size_t>(stage)];
    const auto hit = known.find(memo_key(c));
    return hit == known.end() ? nullptr : &hit->second;
  }
  void remember(int stage, const models::LlmComm& c, double duration_s) {
    memo[static_cast<std::size_t>(stage)].emplace(memo_key(c), duration_s);
  }

  Communicator& comm_of(int stage, models::CommGroup g) {
    const auto s = static_cast<std::size_t>(stage);
    switch (g) {
      case models::CommGroup::kCp:
        return *cp[s];
      case models::CommGroup::kDp:
        return *dp[s];
      case models::CommGroup::kDpCp:
        return *dpcp[s];
      default:
        return *tp[s];
    }
  }

  // Bytes put on the wire by every GPU of the job for one call of `c` on this stage's group.
  void count_bytes(int stage, const models::LlmComm& c, int it) {
    if (!measured(it)) return;
    const Communicator& comm = comm_of(stage, c.group);
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
  void run_segments(int stage, int it, const std::vector<PricedSegment>& segs,
                    const std::string& label,
                    const std::function<void(std::size_t)>& before = nullptr,
                    const std::function<void(std::size_t)>& after = nullptr) {
    struct Pending {
      CollectiveCall call;
      models::CommGroup group;
      double start_s;
      const models::LlmComm* comm;
      bool learn;  // a memoizable call simulated as flows: remember its duration
    };
    std::vector<Pending> pending;
    const auto finish = [&](Pending& x) {
      const double t0 = sg4::Engine::get_clock();
      x.call.wait();
      add_wait(stage, x.group, it, sg4::Engine::get_clock() - t0);
      record(stage, group_name(x.group), it, t0, x.comm->name);
      if (x.learn) remember(stage, *x.comm, x.call.done_at_s() - x.start_s);
    };
    const auto drain = [&] {
      for (Pending& x : pending) finish(x);
      pending.clear();
    };
    for (std::size_t k = 0; k < segs.size(); ++k) {
      const PricedSegment& seg = segs[k];
      if (before) before(k);
      const double t0 = sg4::Engine::get_clock();
      if (seg.compute_s > 0.0) sg4::this_actor::sleep_for(seg.compute_s);
      if (measured(it)) acc[static_cast<std::size_t>(stage)].compute_s += seg.compute_s;
      record(stage, "compute", it, t0, label + ".seg" + std::to_string(k));
      if (after) after(k);
      drain();
      for (const models::LlmComm& c : seg.comms) {
        Communicator& comm = comm_of(stage, c.group);
        if (comm.size() <= 1 || call_bytes(c) <= 0.0) continue;
        count_bytes(stage, c, it);
        const double now = sg4::Engine::get_clock();
        const double* known = recall(stage, c);
        Pending x{known ? CollectiveCall::ending_at(now + *known)
                        : collective_for(c.kind).start(comm, call_bytes(c), c.steps),
                  c.group, now, &c, !known && private_group(stage, c.group)};
        if (spec.parallel.overlap_tp_comm && c.overlappable) {
          pending.push_back(std::move(x));
        } else {
          finish(x);
        }
      }
    }
    drain();
  }

  // Waits for input on `box`; the wait before the producer sent is bubble, after it exposed PP.
  void receive(int stage, int it, sg4::Mailbox* box, const std::string& label) {
    const double t0 = sg4::Engine::get_clock();
    auto* sent = box->get<double>();
    const double sent_s = *sent;
    delete sent;
    const double t1 = sg4::Engine::get_clock();
    if (measured(it)) {
      StageBreakdown& b = acc[static_cast<std::size_t>(stage)];
      b.bubble_s += std::max(0.0, std::min(t1, sent_s) - t0);
      b.exposed_pp_s += t1 - std::max(t0, std::min(t1, sent_s));
    }
    if (t1 > t0) record(stage, "pp_wait", it, t0, label);
  }

  void send(int stage, int it, sg4::Mailbox* box, double bytes_sent) {
    box->put_init(new double(sg4::Engine::get_clock()), static_cast<std::uint64_t>(bytes_sent))
        ->detach();
    (void)stage;
    if (measured(it)) {
      const auto& p = spec.parallel;
      bytes["pp"] += bytes_sent * p.tp * p.cp * p.dp / spec.iterations;
    }
  }

  void push_dp(int stage, const models::LlmComm* c) {
    DpStream& d = dp_stream[static_cast<std::size_t>(stage)];
    const std::unique_lock lock(*d.mutex);
    d.queue.push_back(c);
    if (c) ++d.pushed;
    d.cv->notify_all();
  }

  // Blocks until the stage's DP stream has finished `target` collectives; exposed DP time.
  void wait_dp(int stage, int it, int target) {
    DpStream& d = dp_stream[static_cast<std::size_t>(stage)];
    const double t0 = sg4::Engine::get_clock();
    {
      std::unique_lock lock(*d.mutex);
      while (d.done < target) d.cv->wait(lock);
    }
    const double waited = sg4::Engine::get_clock() - t0;
    add_wait(stage, models::CommGroup::kDp, it, waited);
    if (waited > 0.0) record(stage, "dp", it, t0, "dp.wait");
  }

  void dp_main(int stage) {
    DpStream& d = dp_stream[static_cast<std::size_t>(stage)];
    int it_seen = 0;
    for (;;) {
      const models::LlmComm* c = nullptr;
      {
        std::unique_lock lock(*d.mutex);
        while (d.queue.empty()) d.cv->wait(lock);
        c = d.queue.front();
        d.queue.pop_front();
      }
      if (!c) return;
      const double t0 = sg4::Engine::get_clock();
      it_seen = barrier_epoch;
      count_bytes(stage, *c, it_seen);
      collective_for(c->kind)
          .start(comm_of(stage, c->group), call_bytes(*c), c->steps, spec.dp_flow_factor)
          .wait();
      record(stage, "dp", it_seen, t0, c->name);
      const std::unique_lock lock(*d.mutex);
      ++d.done;
      d.cv->notify_all();
    }
  }

  void barrier(int stage, int it) {
    const double t0 = sg4::Engine::get_clock();
    {
      std::unique_lock lock(*barrier_mutex);
      if (++arrived == pp) {
        arrived = 0;
        ++barrier_epoch;
        iteration_end.push_back(t0);
        barrier_cv->notify_all();
      } else {
        while (barrier_epoch <= it) barrier_cv->wait(lock);
      }
    }
    if (measured(it))
      acc[static_cast<std::size_t>(stage)].bubble_s += sg4::Engine::get_clock() - t0;
    if (stage == 0 && spec.on_iteration) spec.on_iteration(it + 1, total_iterations);
  }

  // Pushes a list of DP pieces; returns the stream target that covers them (0: nothing).
  int push_all(int stage, const std::vector<models::LlmComm>& list) {
    for (const models::LlmComm& c : list) push_dp(stage, &c);
    return list.empty() ? 0 : dp_stream[static_cast<std::size_t>(stage)].pushed;
  }

  void stage_main(int stage) {
    for (int c = stage; c < chunks; c += pp) {
      fwd_in[static_cast<std::size_t>(c)]->set_receiver(sg4::Actor::self());
      bwd_in[static_cast<std::size_t>(c)]->set_receiver(sg4::Actor::self());
    }
    const auto& p = spec.parallel;
    const auto& tasks = order[static_cast<std::size_t>(stage)];
    DpStream& d = dp_stream[static_cast<std::size_t>(stage)];
    // A task's per-micro-batch parameter gathers, one list per segment (ZeRO-3 / FSDP).
    // Pipelined FSDP gathers only for the chunk's first forward of the iteration.
    const auto gathers =
        [&](const PipelineTask& t) -> const std::vector<std::vector<models::LlmComm>>& {
      const DpPieces& pc = pieces[static_cast<std::size_t>(t.chunk)];
      if (t.forward && t.microbatch == 0 && !pc.gather_first.empty()) return pc.gather_first;
      return t.forward ? pc.gather_fwd : pc.gather_bwd;
    };
    static const std::vector<models::LlmComm> kNone;
    const auto piece = [](const std::vector<std::vector<models::LlmComm>>& lists,
                          std::size_t k) -> const std::vector<models::LlmComm>& {
      return k < lists.size() ? lists[k] : kNone;
    };
    // ZeRO-1/2 gathers: per chunk, the DP target of each forward segment's piece.
    std::vector<std::vector<int>> chunk_ready(static_cast<std::size_t>(chunks));
    for (int it = 0; it < total_iterations; ++it) {
      std::vector<int> backwards(static_cast<std::size_t>(chunks), 0);
      // With prefetch, segment k + 1's gathers are launched when segment k starts, and the next
      // task's first ones when this task's last segment starts (FSDP's prefetch of one layer).
      int first_ready = 0;  // the current task's segment-0 gathers
      if (p.overlap_param_gather && !tasks.empty())
        first_ready = push_all(stage, piece(gathers(tasks[0]), 0));
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        const PipelineTask& t = tasks[i];
        const PricedChunk& pc = spec.chunks[static_cast<std::size_t>(t.chunk)];
        const DpPieces& pcs = pieces[static_cast<std::size_t>(t.chunk)];
        const std::string label = std::string(t.forward ? "F" : "B") + ".c" +
                                  std::to_string(t.chunk) + ".mb" + std::to_string(t.microbatch);
        const auto& g = gathers(t);
        const std::size_t segments = t.forward ? pc.forward.size() : pc.backward.size();
        std::vector<int> ready(std::max<std::size_t>(1, segments) + 1, 0);
        ready[0] = first_ready;
        first_ready = 0;
        const bool last = !t.forward && backwards[static_cast<std::size_t>(t.chunk)] + 1 == m;
        auto& step_ready = chunk_ready[static_cast<std::size_t>(t.chunk)];
        const auto before = [&](std::size_t k) {
          if (t.forward && k < step_ready.size()) {
            wait_dp(stage, it, step_ready[k]);  // the first forward after the optimizer
            step_ready[k] = 0;
          }
          if (!p.overlap_param_gather) ready[k] = push_all(stage, piece(g, k));
          wait_dp(stage, it, ready[k]);
          if (!p.overlap_param_gather) return;
          if (k + 1 < segments) {
            ready[k + 1] = push_all(stage, piece(g, k + 1));
          } else if (i + 1 < tasks.size()) {
            first_ready = push_all(stage, piece(gathers(tasks[i + 1]), 0));
          }
        };
        const auto after = [&](std::size_t k) {
          if (t.forward) return;
          // Gradient reductions of this segment's parameters: per micro-batch ones (ZeRO-3)
          // after every backward, the others after the chunk's last micro-batch (overlapped
          // with the rest of the backward pass).
          if (push_all(stage, piece(pcs.grad_per_mb, k)) > 0 && !p.overlap_dp_comm)
            wait_dp(stage, it, d.pushed);
          if (last && p.overlap_dp_comm) push_all(stage, piece(pcs.grad, k));
        };
        if (t.forward) {
          if (t.chunk > 0) receive(stage, it, fwd_in[static_cast<std::size_t>(t.chunk)], label);
          run_segments(stage, it, pc.forward, label, before, after);
          if (t.chunk + 1 < chunks)
            send(stage, it, fwd_in[static_cast<std::size_t>(t.chunk + 1)], pc.send_forward_bytes);
        } else {
          if (t.chunk + 1 < chunks)
            receive(stage, it, bwd_in[static_cast<std::size_t>(t.chunk)], label);
          run_segments(stage, it, pc.backward, label, before, after);
          if (last) {
            // Pipelined FSDP: the post-backward of the chunk's last micro-batch reduces all.
            int target = 0;
            for (const auto& list : pcs.grad_last) target = std::max(target, push_all(stage, list));
            if (target > 0 && !p.overlap_dp_comm) wait_dp(stage, it, target);
          }
          if (t.chunk > 0)
            send(stage, it, bwd_in[static_cast<std::size_t>(t.chunk - 1)], pc.send_backward_bytes);
          ++backwards[static_cast<std::size_t>(t.chunk)];
        }
      }
      if (!p.overlap_dp_comm)
        for (int c = stage; c < chunks; c += pp)
          for (const auto& list : pieces[static_cast<std::size_t>(c)].grad) push_all(stage, list);
      wait_dp(stage, it, d.pushed);
      double opt = 0.0;
      for (int c = stage; c < chunks; c += pp)
        opt += spec.chunks[static_cast<std::size_t>(c)].optimizer_s;
      const double t0 = sg4::Engine::get_clock();
      if (opt > 0.0) sg4::this_actor::sleep_for(opt);
      if (measured(it)) acc[static_cast<std::size_t>(stage)].optimizer_s += opt;
      record(stage, "compute", it, t0, "optimizer");
      // Distributed optimizer / ZeRO-1/2: the updated shards are all-gathered; with the overlap
      // switch under the next iteration's forward (each chunk's first forward waits for its
      // own), otherwise now.
      for (int c = stage; c < chunks; c += pp) {
        auto& targets = chunk_ready[static_cast<std::size_t>(c)];
        const auto& steps = pieces[static_cast<std::size_t>(c)].gather_step;
        targets.assign(steps.size(), 0);
        for (std::size_t k = 0; k < steps.size(); ++k) targets[k] = push_all(stage, steps[k]);
      }
      if (!p.overlap_param_gather) wait_dp(stage, it, d.pushed);
      barrier(stage, it);
    }
    push_dp(stage, nullptr);
  }
};

PipelineJob::PipelineJob(const SimulatedPlatform& platform, PipelineJobSpec spec)
    : state_(std::make_unique<State>(std::move(spec))) {
  State& s = *state_;
  const models::ParallelConfig& p = s.spec.parallel;
  s.pp = p.pp;
  s.v = p.schedule == models::PipelineSchedule::kInterleaved1F1B ? p.virtual_stages : 1;
  s.chunks = s.pp * s.v;
  s.m = static_cast<int>(p.micro_batches());
  s.total_iterations = s.spec.warmup + s.spec.iterations;
  if (s.spec.iterations < 1 || s.spec.warmup < 0)
    throw std::invalid_argument("pipeline job: need iterations >= 1 and warmup >= 0");
  if (static_cast<int>(s.spec.chunks.size()) != s.chunks)
    throw std::invalid_argument(
        "pipeline job: " + std::to_string(s.spec.chunks.size()) +
        " priced chunks for pp x virtual stages = " + std::to_string(s.chunks));
  if (s.m < 1) throw std::invalid_argument("pipeline job: no micro-batch per iteration");
  const int gpn = s.spec.gpus_per_node;
  if (gpn < 1 || static_cast<long>(s.spec.nodes.size()) * gpn != s.layout.ranks())
    throw std::invalid_argument("pipeline job: " + std::to_string(s.spec.nodes.size()) +
                                " nodes x " + std::to_string(gpn) + " GPUs for " +
                                std::to_string(s.layout.ranks()) + " ranks");
  const auto host_of = [&](int rank) {
    const GpuSlot g = slot_of(rank, gpn);
    return platform.gpu(s.spec.nodes[static_cast<std::size_t>(g.node)], g.local);
  };
  const auto comm_of_ranks = [&](const std::vector<int>& ranks) {
    std::vector<sg4::Host*> hosts;
    std::vector<int> nodes;
    for (int r : ranks) {
      hosts.push_back(host_of(r));
      nodes.push_back(slot_of(r, gpn).node);
    }
    return std::make_unique<Communicator>(std::move(hosts), nodes);
  };
  const auto comm_of = [&](models::ParallelDim d, const RankCoord& base) {
    return comm_of_ranks(s.layout.group(d, base));
  };
  for (int st = 0; st < s.pp; ++st) {
    RankCoord base;
    base.pp = st;
    s.stage_host.push_back(host_of(s.layout.rank_of(base)));
    s.tp.push_back(comm_of(models::ParallelDim::kTp, base));
    s.cp.push_back(comm_of(models::ParallelDim::kCp, base));
    s.dp.push_back(comm_of(models::ParallelDim::kDp, base));
    // DP x CP (the ranks that hold the same weights), in rank order.
    std::vector<int> ranks;
    for (int c : s.layout.group(models::ParallelDim::kCp, base)) {
      for (int r : s.layout.group(models::ParallelDim::kDp, s.layout.coord_of(c)))
        ranks.push_back(r);
    }
    std::sort(ranks.begin(), ranks.end());
    s.dpcp.push_back(comm_of_ranks(ranks));
    s.order.push_back(stage_order(p.schedule, s.pp, s.v, s.m, st));
    // A group is private when it is exactly the GPUs of one node.
    const auto fills_node = [&](models::ParallelDim d) {
      const std::vector<int> members = s.layout.group(d, base);
      if (static_cast<int>(members.size()) != gpn) return false;
      for (int r : members)
        if (slot_of(r, gpn).node != slot_of(members.front(), gpn).node) return false;
      return true;
    };
    s.private_tp_cp.push_back({fills_node(models::ParallelDim::kTp) && s.spec.memoize_private,
                               fills_node(models::ParallelDim::kCp) && s.spec.memoize_private});
  }
  // Private means no link of the group's ring is on a route the stage's other flows take: p2p
  // to and from the neighbouring stages, and the rings of its other groups.
  {
    using LinkSet = std::set<const sg4::Link*>;
    const auto add_route = [](sg4::Host* a, sg4::Host* b, LinkSet& out) {
      std::vector<sg4::Link*> links;
      double latency = 0.0;
      a->route_to(b, links, &latency);
      out.insert(links.begin(), links.end());
    };
    for (int st = 0; st < s.pp; ++st) {
      const auto i = static_cast<std::size_t>(st);
      auto& flags = s.private_tp_cp[i];
      if (!flags[0] && !flags[1]) continue;
      LinkSet other;
      for (int nb : {(st + 1) % s.pp, (st + s.pp - 1) % s.pp}) {
        if (nb == st) continue;
        add_route(s.stage_host[i], s.stage_host[static_cast<std::size_t>(nb)], other);
        add_route(s.stage_host[static_cast<std::size_t>(nb)], s.stage_host[i], other);
      }
      other.insert(s.dp[i]->ring_links().begin(), s.dp[i]->ring_links().end());
      other.insert(s.dpcp[i]->ring_links().begin(), s.dpcp[i]->ring_links().end());
      const LinkSet& tp_links = s.tp[i]->ring_links();
      const LinkSet& cp_links = s.cp[i]->ring_links();
      const auto disjoint = [](const LinkSet& a, const LinkSet& b) {
        for (const sg4::Link* l : a)
          if (b.count(l)) return false;
        return true;
      };
      flags[0] = flags[0] && disjoint(tp_links, other) && disjoint(tp_links, cp_links);
      flags[1] = flags[1] && disjoint(cp_links, other) && disjoint(cp_links, tp_links);
    }
  }
  for (int c = 0; c < s.chunks; ++c) {
    s.fwd_in.push_back(sg4::Mailbox::by_name(s.spec.name + ".c" + std::to_string(c) + ".f"));
    s.bwd_in.push_back(sg4::Mailbox::by_name(s.spec.name + ".c" + std::to_string(c) + ".b"));
  }
  s.memo.resize(static_cast<std::size_t>(s.pp));
  s.dp_stream = std::vector<State::DpStream>(static_cast<std::size_t>(s.pp));
  for (const PricedChunk& pc : s.spec.chunks) s.pieces.push_back(cut_dp_pieces(pc));
  s.acc.assign(static_cast<std::size_t>(s.pp), {});
  for (int st = 0; st < s.pp; ++st) {
    sg4::Host* h = s.stage_host[static_cast<std::size_t>(st)];
    sg4::Actor::create(s.spec.name + ".stage" + std::to_string(st), h,
                       [&s, st] { s.stage_main(st); });
    sg4::Actor::create(s.spec.name + ".dp" + std::to_string(st), h, [&s, st] { s.dp_main(st); });
  }
}

PipelineJob::~PipelineJob() = default;

PipelineResult PipelineJob::result() const {
  const State& s = *state_;
  PipelineResult r;
  r.name = s.spec.name;
  r.gpus = s.layout.ranks();
  r.microbatches = s.m;
  if (static_cast<int>(s.iteration_end.size()) != s.total_iterations)
    throw std::logic_error("pipeline job: the engine has not run every iteration");
  double sum = 0.0;
  for (int it = s.spec.warmup; it < s.total_iterations; ++it) {
    const double start = it == 0 ? 0.0 : s.iteration_end[static_cast<std::size_t>(it - 1)];
    const double t = s.iteration_end[static_cast<std::size_t>(it)] - start;
    r.iteration_times_s.push_back(t);
    sum += t;
  }
  r.iteration_time_s = sum / s.spec.iterations;
  for (StageBreakdown b : s.acc) {
    const double n = s.spec.iterations;
    for (double* x : {&b.compute_s, &b.optimizer_s, &b.bubble_s, &b.exposed_tp_s, &b.exposed_cp_s,
                      &b.exposed_pp_s, &b.exposed_dp_s})
      *x /= n;
    r.stages.push_back(b);
  }
  r.bytes_per_iteration = s.bytes;
  r.intervals = s.intervals;
  return r;
}

}  // namespace scalecast::sim
