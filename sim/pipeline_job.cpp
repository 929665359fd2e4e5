// The pipeline job's placement: its simulated slots' hosts and process groups, which TP and CP
// groups are private to their node, the actors; and its result (sim/pipeline_job.hpp).

#include "sim/pipeline_job.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "sim/pipeline_job_state.hpp"
#include "sim/simulated_platform.hpp"

namespace scalecast::sim {

PipelineJob::PipelineJob(const SimulatedPlatform& platform, PipelineJobSpec spec)
    : state_(std::make_unique<State>(std::move(spec))) {
  State& s = *state_;
  s.start_s = sg4::Engine::get_clock();
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
    const int members = static_cast<int>(hosts.size());
    auto comm = std::make_unique<Communicator>(std::move(hosts), nodes, s.spec.socket_factor,
                                               platform.gpu_link_unit_Bps(s.spec.nodes.front()));
    if (s.spec.nccl_topology && members > 1) {
      std::map<int, int> per_node;
      for (int n : nodes) ++per_node[n];
      int most = 0;
      for (const auto& [n, count] : per_node) most = std::max(most, count);
      calibration::NcclTopology t = s.spec.nccl_topology(static_cast<int>(per_node.size()), most);
      t.ranks = members;  // uneven groups: the ring's steps follow its members
      comm->set_nccl(t);
    }
    return comm;
  };
  const auto comm_of = [&](models::ParallelDim d, const RankCoord& base) {
    return comm_of_ranks(s.layout.group(d, base));
  };
  s.reps = s.spec.variability.varied() ? p.dp : 1;
  for (int slot = 0; slot < s.pp * s.reps; ++slot) {
    RankCoord base;
    base.pp = s.stage_of(slot);
    base.dp = s.replica_of(slot);
    s.stage_host.push_back(host_of(s.layout.rank_of(base)));
    s.tp.push_back(comm_of(models::ParallelDim::kTp, base));
    s.cp.push_back(comm_of(models::ParallelDim::kCp, base));
    std::vector<int>& group = s.group_ranks.emplace_back();
    for (int c : s.layout.group(models::ParallelDim::kCp, base))
      for (int r : s.layout.group(models::ParallelDim::kTp, s.layout.coord_of(c)))
        group.push_back(r);
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
  for (int st = 0; st < s.pp; ++st) {
    RankCoord base;
    base.pp = st;
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
    for (int slot = 0; slot < s.pp * s.reps; ++slot) {
      const auto i = static_cast<std::size_t>(slot);
      const int st = s.stage_of(slot), first = slot - st;  // the replica's stage 0
      const auto j = static_cast<std::size_t>(st);
      auto& flags = s.private_tp_cp[i];
      if (!flags[0] && !flags[1]) continue;
      LinkSet other;
      for (int nb : {(st + 1) % s.pp, (st + s.pp - 1) % s.pp}) {
        if (nb == st) continue;
        const auto k = static_cast<std::size_t>(first + nb);
        add_route(s.stage_host[i], s.stage_host[k], other);
        add_route(s.stage_host[k], s.stage_host[i], other);
      }
      other.insert(s.dp[j]->ring_links().begin(), s.dp[j]->ring_links().end());
      other.insert(s.dpcp[j]->ring_links().begin(), s.dpcp[j]->ring_links().end());
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
  for (int r = 0; r < s.reps; ++r) {
    // "/" cannot be in a job's name, so two jobs of a mix never share a mailbox (with ".", jobs
    // "a" and "a.r1" did: job a's replica 1 and job a.r1's replica 0).
    const std::string prefix = s.spec.name + "/r" + std::to_string(r) + "/c";
    for (int c = 0; c < s.chunks; ++c) {
      s.fwd_in.push_back(sg4::Mailbox::by_name(prefix + std::to_string(c) + "/f"));
      s.bwd_in.push_back(sg4::Mailbox::by_name(prefix + std::to_string(c) + "/b"));
    }
  }
  const auto slots = static_cast<std::size_t>(s.pp * s.reps);
  s.memo.resize(slots);
  s.stretch.assign(slots, 1.0);
  s.dp_stream = std::vector<State::DpStream>(static_cast<std::size_t>(s.pp));
  for (State::DpStream& d : s.dp_stream) {
    d.posted.assign(static_cast<std::size_t>(s.reps), 0);
    d.pushed.assign(static_cast<std::size_t>(s.reps), 0);
  }
  for (const PricedChunk& pc : s.spec.chunks) s.pieces.push_back(cut_dp_pieces(pc));
  s.acc.assign(static_cast<std::size_t>(s.pp), {});
  for (int slot = 0; slot < s.pp * s.reps; ++slot) {
    sg4::Host* h = s.stage_host[static_cast<std::size_t>(slot)];
    const int st = s.stage_of(slot), r = s.replica_of(slot);
    sg4::Actor::create(
        s.spec.name + (r > 0 ? ".r" + std::to_string(r) : "") + ".stage" + std::to_string(st), h,
        [&s, slot] { s.guarded([&s, slot] { s.stage_main(slot); }); });
    if (r == 0)
      sg4::Actor::create(s.spec.name + ".dp" + std::to_string(st), h,
                         [&s, st] { s.guarded([&s, st] { s.dp_main(st); }); });
  }
}

PipelineJob::~PipelineJob() = default;

PipelineResult PipelineJob::result() const {
  const State& s = *state_;
  // A point out of memory says so (cli/app.cpp's message), as the data-parallel job does.
  if (s.failure) std::rethrow_exception(s.failure);
  PipelineResult r;
  r.name = s.spec.name;
  r.gpus = s.layout.ranks();
  r.microbatches = s.m;
  r.replicas_simulated = s.reps;
  for (int rank = 0; rank < r.gpus; ++rank)
    if (s.spec.variability.straggler_slowdown != 1.0 && s.spec.variability.straggler(rank))
      ++r.stragglers;
  if (static_cast<int>(s.iteration_end.size()) != s.total_iterations)
    throw std::logic_error("pipeline job: the engine has not run every iteration");
  double sum = 0.0;
  for (int it = s.spec.warmup; it < s.total_iterations; ++it) {
    const double start = it == 0 ? s.start_s : s.iteration_end[static_cast<std::size_t>(it - 1)];
    const double t = s.iteration_end[static_cast<std::size_t>(it)] - start;
    r.iteration_times_s.push_back(t);
    sum += t;
  }
  r.iteration_time_s = sum / s.spec.iterations;
  for (StageBreakdown b : s.acc) {
    const double n = static_cast<double>(s.spec.iterations) * s.reps;
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
