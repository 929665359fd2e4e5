// The all-reduce algorithms of Job::State, executed by each rank's actor. Every transfer is a
// mailbox communication from this rank's GPU host to the peer's, so its route, bandwidth and
// sharing come from the platform. `flow`: one communication per algorithm step; `wave`: one
// communication per phase carrying the phase's bytes, then the analytic latency of the other
// steps, (steps - 1) * alpha, alpha being the slowest edge's route latency.

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/comm_wait.hpp"
#include "sim/double_binary_tree.hpp"
#include "sim/job_state.hpp"

namespace sg4 = simgrid::s4u;

namespace scalecast::sim {
namespace {

int payload_token;  // mailbox payloads carry no data; only their simulated size matters

// A started put of `bytes` to `to`; `rate`: the most it moves per second (a TCP stream's cap),
// infinity: the links decide.
sg4::CommPtr start_put(sg4::Mailbox* to, double bytes, double rate) {
  if (!std::isfinite(rate)) return to->put_async(&payload_token, static_cast<std::uint64_t>(bytes));
  sg4::CommPtr put = to->put_init(&payload_token, static_cast<std::uint64_t>(bytes));
  put->set_rate(rate);
  put->start();
  return put;
}

void transfer(sg4::Mailbox* to, sg4::Mailbox* from, double put_bytes, bool do_get,
              double rate = std::numeric_limits<double>::infinity()) {
  sg4::CommPtr put = to ? start_put(to, put_bytes, rate) : nullptr;
  void* got = nullptr;
  sg4::CommPtr get = do_get ? from->get_async<void>(&got) : nullptr;
  if (put) wait_started(put);
  if (get) wait_started(get);
}

EdgeStats edge_stats(const std::vector<std::pair<sg4::Host*, sg4::Host*>>& edges) {
  EdgeStats s;
  s.bandwidth_min = std::numeric_limits<double>::infinity();
  std::vector<sg4::Link*> links;
  for (const auto& [a, b] : edges) {
    links.clear();
    double latency = 0.0;
    a->route_to(b, links, &latency);
    s.alpha_max_s = std::max(s.alpha_max_s, latency);
    for (const sg4::Link* l : links)
      s.bandwidth_min = std::min(s.bandwidth_min, l->get_bandwidth());
  }
  if (edges.empty()) s.bandwidth_min = 0.0;
  return s;
}

}  // namespace

void Job::State::measure_edges() {
  std::vector<std::pair<sg4::Host*, sg4::Host*>> e_intra, e_inter, e_flat, e_tflat, e_tinter;
  const int intra_nodes = shortcut ? 1 : nodes;
  for (int n = 0; n < intra_nodes; ++n)
    for (int g = 0; g < gpus; ++g)
      for (std::size_t k = 0; k < rings.size() && gpus > 1; ++k)
        e_intra.push_back({gpu_host[n * gpus + g], gpu_host[intra_next(k, n * gpus + g)]});
  for (int n = 0; n < nodes && nodes > 1; ++n)
    for (int g = 0; g < gpus; ++g) {
      e_inter.push_back({gpu_host[n * gpus + g], gpu_host[((n + 1) % nodes) * gpus + g]});
      for (const TreeLinks& l : nccl_double_tree(nodes, n))
        if (l.parent >= 0)
          e_tinter.push_back({gpu_host[n * gpus + g], gpu_host[l.parent * gpus + g]});
    }
  if (algorithm == Algorithm::kRing)
    for (int r = 0; r < ranks && ranks > 1; ++r)
      for (std::size_t k = 0; k < rings.size(); ++k)
        e_flat.push_back({gpu_host[r], gpu_host[flat_next(k, r)]});
  if (algorithm == Algorithm::kTree)
    for (int r = 0; r < ranks; ++r)
      for (const TreeLinks& l : nccl_double_tree(ranks, r))
        if (l.parent >= 0) e_tflat.push_back({gpu_host[r], gpu_host[l.parent]});
  intra = edge_stats(e_intra);
  inter = edge_stats(e_inter);
  flat = edge_stats(e_flat);
  tree_flat = edge_stats(e_tflat);
  tree_inter = edge_stats(e_tinter);
}

void Job::State::ring_phase(sg4::Mailbox* to, sg4::Mailbox* from, int steps, double step_bytes,
                            const EdgeStats& edges, LinkClass cls, double multiplicity,
                            double flow_factor, double rate) {
  if (steps <= 0) return;
  if (fidelity == Fidelity::kFlow) {
    for (int s = 0; s < steps; ++s) transfer(to, from, step_bytes * flow_factor, true, rate);
  } else {
    transfer(to, from, step_bytes * steps * flow_factor, true, rate);
    sg4::this_actor::sleep_for((steps - 1) * edges.alpha_max_s);
  }
  recorder.add_bytes(cls, step_bytes * steps, multiplicity);
}

void Job::State::rings_phase(const std::vector<RingHop>& hops, int steps, double step_bytes,
                             const EdgeStats& edges, double multiplicity) {
  if (hops.size() == 1) {
    const RingHop& h = hops.front();
    ring_phase(h.to, h.from, steps, step_bytes, edges, h.cls, multiplicity, h.flow_factor, h.rate);
    return;
  }
  if (steps <= 0) return;
  const double piece = step_bytes / static_cast<double>(hops.size());
  // Flow: step s of every ring at once, then step s + 1; wave: each ring's phase as one flow.
  const int rounds = fidelity == Fidelity::kFlow ? steps : 1;
  const double per_round = fidelity == Fidelity::kFlow ? piece : piece * steps;
  std::vector<void*> got(hops.size(), nullptr);
  for (int s = 0; s < rounds; ++s) {
    std::vector<sg4::CommPtr> comms;
    for (const RingHop& h : hops)
      comms.push_back(start_put(h.to, per_round * h.flow_factor, h.rate));
    for (std::size_t k = 0; k < hops.size(); ++k)
      comms.push_back(hops[k].from->get_async<void>(&got[k]));
    wait_all_started(comms);
  }
  if (fidelity != Fidelity::kFlow) sg4::this_actor::sleep_for((steps - 1) * edges.alpha_max_s);
  for (const RingHop& h : hops) recorder.add_bytes(h.cls, piece * steps, multiplicity);
}

void Job::State::intra_phase(int rank, int steps, double step_bytes, int& intra_epoch) {
  const int node = rank / gpus;
  const int epoch = intra_epoch++;
  if (shortcut && node != 0) {
    intra_gate->wait(epoch);
    return;
  }
  std::vector<RingHop> hops(rings.size());
  for (std::size_t k = 0; k < rings.size(); ++k) {
    const int next = intra_next(static_cast<int>(k), rank);
    hops[k].to = k == 0 ? mailbox[next][kIntra] : ring_box[next][k - 1];
    hops[k].from = k == 0 ? mailbox[rank][kIntra] : ring_box[rank][k - 1];
  }
  rings_phase(hops, steps, step_bytes, intra, shortcut ? nodes : 1);
  if (shortcut) intra_gate->arrive(epoch);
}

void Job::State::tree_all_reduce(std::vector<std::array<sg4::Mailbox*, kChannelCount>>& boxes,
                                 const std::vector<int>& members, int pos, double bytes,
                                 const EdgeStats& edges, LinkClass cls, bool members_are_ranks,
                                 int streams) {
  const int n = static_cast<int>(members.size());
  if (n <= 1) return;
  // NCCL's double binary tree: each tree reduces and broadcasts half of the buffer, pipelined
  // in chunks of NCCL's size (or the scenario's `chunks`).
  const std::array<TreeLinks, 2> trees = nccl_double_tree(n, pos);
  const double half = bytes / 2.0;
  const int chunks = tree_chunks(half);
  const int h = nccl_tree_depth(n);
  static constexpr Channel kUp[2] = {kTreeUp, kTreeUpB}, kDown[2] = {kTreeDown, kTreeDownB};
  // What a flow to member `to` carries per payload byte (NCCL's socket transport between nodes).
  const auto between_nodes = [&](int to) {
    return !members_are_ranks || members[to] / gpus != members[pos] / gpus;
  };
  const auto factor_to = [&](int to) { return between_nodes(to) ? socket_factor : 1.0; };
  // CUDA-aware MPI over TCP: a message to another node is `streams` TCP streams, each capped.
  const double capped = mpi_stream_Bps * streams;
  const auto rate_to = [&](int to) {
    return between_nodes(to) ? capped : std::numeric_limits<double>::infinity();
  };
  // The pipeline fill's bandwidth: the edges' narrowest, at the socket transport's share (and no
  // faster than MPI's capped streams) when any edge is between nodes.
  const bool any_between = !members_are_ranks || nodes > 1;
  const double fill_bw = std::min(
      (edges.bandwidth_min > 0.0 ? edges.bandwidth_min : 1.0) / (any_between ? socket_factor : 1.0),
      any_between ? capped : std::numeric_limits<double>::infinity());
  void* got = nullptr;
  for (int phase = 0; phase < 2; ++phase) {  // reduce towards the roots, then broadcast down
    std::vector<sg4::CommPtr> comms;
    double sent = 0.0;
    const auto put = [&](int to, Channel ch, double b) {
      comms.push_back(start_put(boxes[members[to]][ch], b * factor_to(to), rate_to(to)));
      sent += b;
    };
    const auto get = [&](Channel ch) { return boxes[members[pos]][ch]->get_async<void>(&got); };
    if (fidelity == Fidelity::kWave && n > kMaxTreeEdgeMembers) {
      // Past kMaxTreeEdgeMembers, one flow to the next member carrying what a tree edge's
      // bottleneck carries (each rank sends and receives the buffer once per phase): the same
      // time on a non-blocking fabric, and flows that end together, where the tree edges'
      // staggered ends made SimGrid re-solve the whole network thousands of times per bucket.
      // The flow stands for the two trees' edges: two streams each way.
      transfer(boxes[members[(pos + 1) % n]][kUp[phase]], boxes[members[pos]][kUp[phase]],
               bytes * factor_to((pos + 1) % n), true, 2.0 * rate_to((pos + 1) % n));
      sent += bytes * (n - 1) / n;  // the trees' bytes: n - 1 edges of half the buffer, twice
      sg4::this_actor::sleep_for((h - 1) * (edges.alpha_max_s + bytes / chunks / fill_bw));
    } else if (fidelity == Fidelity::kWave) {
      // Every edge's flow at once (the pipeline's steady state: each participant sends and
      // receives about `bytes`), then the pipeline's fill, h - 1 chunk steps, and the route
      // latency of the h - 1 hops the one flow did not cross.
      for (int t = 0; t < 2; ++t) {
        const TreeLinks& l = trees[t];
        if (phase == 0) {
          if (l.parent >= 0) put(l.parent, kUp[t], half);
          for (int c : l.children)
            if (c >= 0) comms.push_back(get(kUp[t]));
        } else {
          if (l.parent >= 0) comms.push_back(get(kDown[t]));
          for (int c : l.children)
            if (c >= 0) put(c, kDown[t], half);
        }
      }
      wait_all_started(comms);
      sg4::this_actor::sleep_for((h - 1) * (edges.alpha_max_s + bytes / chunks / fill_bw));
    } else {
      // Chunk by chunk, each tree on its own (NCCL runs them on separate channels): a rank
      // forwards piece k of a tree once its children's (reduce) or its parent's (broadcast)
      // piece k of that tree is in and its piece k - 1 has arrived (a link carries the pieces
      // one after the other, NCCL's steps). Every receive is posted up front (NCCL's receivers
      // have their buffer slots ready).
      const double piece = half / chunks;
      std::vector<sg4::CommPtr> live;
      std::vector<std::pair<int, bool>> what;  // per live comm: tree, is a receive
      std::array<int, 2> per_chunk{0, 0}, gets_done{0, 0}, puts_live{0, 0}, next{0, 0};
      for (int t = 0; t < 2; ++t) {
        const TreeLinks& l = trees[t];
        per_chunk[t] = phase == 0 ? (l.children[0] >= 0) + (l.children[1] >= 0) : l.parent >= 0;
        for (int k = 0; k < chunks * per_chunk[t]; ++k) {
          live.push_back(get(phase == 0 ? kUp[t] : kDown[t]));
          what.push_back({t, true});
        }
      }
      for (;;) {
        for (int t = 0; t < 2; ++t)
          while (next[t] < chunks && gets_done[t] >= (next[t] + 1) * per_chunk[t] &&
                 puts_live[t] == 0) {
            const TreeLinks& l = trees[t];
            std::vector<int> to;
            if (phase == 0 && l.parent >= 0) to.push_back(l.parent);
            if (phase == 1)
              for (int c : l.children)
                if (c >= 0) to.push_back(c);
            for (int dst : to) {
              put(dst, phase == 0 ? kUp[t] : kDown[t], piece);
              live.push_back(comms.back());
              what.push_back({t, false});
              ++puts_live[t];
            }
            ++next[t];
          }
        if (live.empty()) break;
        const auto i = static_cast<std::size_t>(sg4::Comm::wait_any(live));
        const auto [t, is_get] = what[i];
        (is_get ? gets_done : puts_live)[t] += is_get ? 1 : -1;
        live[i] = live.back();
        live.pop_back();
        what[i] = what.back();
        what.pop_back();
      }
    }
    recorder.add_bytes(cls, sent);
  }
}

int Job::State::tree_chunks(double tree_bytes) const {
  if (spec.allreduce.chunks > 0) return spec.allreduce.chunks;
  // NCCL's tree pieces (Simple): one step of its 4 MiB buffer, NCCL_STEPS = 8 steps, so 512 KiB
  // (NCCL v2.21.5-1: src/enqueue.cc computeCollChunkInfo, chunkSteps 1 for the tree;
  // src/init.cc DEFAULT_BUFFSIZE; src/include/device.h NCCL_STEPS). Flow fidelity sends each
  // piece as its own communication, so it is capped there.
  constexpr double kNcclTreeChunkBytes = 512.0 * 1024;
  const double c = std::ceil(tree_bytes / kNcclTreeChunkBytes);
  const double cap = fidelity == Fidelity::kFlow ? kMaxFlowTreeChunks : 1e9;
  return static_cast<int>(std::clamp(c, 1.0, cap));
}

BucketPlan Job::State::plan_bucket(double bytes) const {
  BucketPlan p;
  p.inter = spec.allreduce.inter_node == Algorithm::kTree ? InterStage::kTree : InterStage::kRing;
  if (!model) return p;
  using calibration::NcclAlgo;
  if (algorithm == Algorithm::kHierarchical && !per_bucket) {
    // Horovod's stages, each an NCCL call on its own communicator: reduce-scatter and all-gather
    // inside the node (rings; latency of a ring all-reduce on the node's GPUs), the all-reduce
    // of one shard across nodes with the chosen inter-node algorithm.
    const auto& proto = spec.allreduce.protocol;
    double latency = 0.0;
    if (gpus > 1 && spec.collectives_intra) {
      const auto c = spec.collectives_intra->choose(bytes, NcclAlgo::kRing, proto);
      p.wire_factor = 1.0 / c.efficiency;
      latency += c.latency_s;
    }
    if (nodes > 1 && spec.collectives_inter) {
      const auto c = spec.collectives_inter->choose(
          bytes / gpus, p.inter == InterStage::kTree ? NcclAlgo::kTree : NcclAlgo::kRing, proto);
      p.inter_wire_factor = 1.0 / c.efficiency;
      latency += c.latency_s;
    }
    p.extra_latency_s = std::max(0.0, latency - pattern_alpha_s(p.inter));
    // Each call holds its own communicator's channels: the node's reduce-scatter and
    // all-gather, then every GPU's all-reduce across nodes (per local rank).
    if (spec.allreduce.sm_contention) {
      if (spec.collectives_intra) p.sm_blocks = spec.collectives_intra->topology().channels;
      if (spec.collectives_inter) p.inter_sm_blocks = spec.collectives_inter->topology().channels;
    }
    return p;
  }
  const calibration::CollectiveChoice c =
      model->choose(bytes, nccl_algo_of(spec.allreduce.algorithm), spec.allreduce.protocol);
  if (per_bucket) {
    // The inter-node stage each NCCL algorithm runs: rings, (double binary) trees, or the
    // switches' reduction (one shard up and the result down through each NIC). Inside a node
    // the reduce-scatter and all-gather rings carry every algorithm's stage, each moving about
    // (g-1)/g of the buffer each way per GPU; NVLS moves less (below).
    if (c.algo == NcclAlgo::kTree || c.algo == NcclAlgo::kNvlsTree) p.inter = InterStage::kTree;
    if (c.algo == NcclAlgo::kCollNetDirect || c.algo == NcclAlgo::kCollNetChain ||
        c.algo == NcclAlgo::kNvls)
      p.inter = InterStage::kSharp;
  }
  p.wire_factor = p.inter_wire_factor = 1.0 / c.efficiency;
  // NVLS (one node; with the tree or CollNet across nodes) reduces in the NVSwitch: the intra-node
  // flows carry its volume, not the ring's (nvls_intra_volume; about x0.77 on 8 GPUs).
  if ((c.algo == NcclAlgo::kNvls || c.algo == NcclAlgo::kNvlsTree) && gpus >= 3)
    p.wire_factor *= nvls_intra_volume(gpus);
  // NCCL's ring is one ring over all the job's GPUs, not Horovod's ring of nodes per local rank:
  // each of its hops, the NICs included, carries 2(P-1)/P of the buffer (P GPUs; nccl-tests
  // doc/PERFORMANCE.md, "bus bandwidth" of all-reduce), where the simulated pattern's inter-node
  // rings carry 2(N-1)/N (N nodes). The inter-node flows carry the difference: x1.25 at 4 nodes
  // of 4 GPUs, x1.83 at 2 nodes of 6, -> 1 as the nodes grow.
  if (per_bucket && c.algo == NcclAlgo::kRing && p.inter == InterStage::kRing && nodes > 1)
    p.inter_wire_factor *= flat_ring_inter_node_volume(nodes, ranks);
  p.extra_latency_s = std::max(0.0, c.latency_s - pattern_alpha_s(p.inter));
  // One thread block per channel; NVLS runs its own channel count. One call: its stages hold
  // the same blocks.
  if (spec.allreduce.sm_contention)
    p.sm_blocks = p.inter_sm_blocks = c.algo == NcclAlgo::kNvls || c.algo == NcclAlgo::kNvlsTree
                                          ? model->topology().nvls_channels
                                          : model->topology().channels;
  return p;
}

double Job::State::pattern_alpha_s(InterStage stage) const {
  // The route latency the simulated steps already carry (wave: steps x alpha_max), so that the
  // model's latency is not counted twice.
  switch (algorithm) {
    case Algorithm::kRing:
      return 2.0 * (ranks - 1) * flat.alpha_max_s;
    case Algorithm::kTree:
      return 2.0 * nccl_tree_depth(ranks) * tree_flat.alpha_max_s;
    default:
      break;
  }
  const double a_intra = gpus > 1 ? 2.0 * (gpus - 1) * intra.alpha_max_s : 0.0;
  double a_inter = 0.0;
  if (nodes > 1) {
    if (stage == InterStage::kRing) a_inter = 2.0 * (nodes - 1) * inter.alpha_max_s;
    if (stage == InterStage::kTree) a_inter = 2.0 * nccl_tree_depth(nodes) * tree_inter.alpha_max_s;
    if (stage == InterStage::kSharp) a_inter = inter.alpha_max_s;
  }
  // One NCCL call's stages run at once (pipelined_hierarchical), their route latencies too;
  // Horovod's three calls one after the other.
  return per_bucket && nodes > 1 ? std::max(a_intra, a_inter) : a_intra + a_inter;
}

void Job::State::inter_stage(std::vector<std::array<sg4::Mailbox*, kChannelCount>>& boxes, int n,
                             int stride, int offset, int pos, double bytes, InterStage stage,
                             int streams) {
  // Member i of the stage is box i * stride + offset. Only the tree needs the list itself, built
  // for the call: every rail actor holding an n-long list for its lifetime cost O(nodes^2)
  // memory (170 MB at 4,608 Summit nodes, 2.2 GB at 16,667).
  const auto member = [&](int i) { return i * stride + offset; };
  switch (stage) {
    case InterStage::kTree: {
      std::vector<int> members(n);
      for (int i = 0; i < n; ++i) members[i] = member(i);
      tree_all_reduce(boxes, members, pos, bytes, tree_inter, LinkClass::kInterNode, false,
                      streams);
      return;
    }
    case InterStage::kRing:
      ring_phase(boxes[member((pos + 1) % n)][kInter], boxes[member(pos)][kInter], 2 * (n - 1),
                 bytes / n, inter, LinkClass::kInterNode, 1.0, socket_factor,
                 mpi_stream_Bps * streams);
      return;
    case InterStage::kSharp:
      // In-network reduction: the shard goes up through the NIC once and the result comes back
      // once; a flow to the next node loads the same NIC ports and leaf switch.
      ring_phase(boxes[member((pos + 1) % n)][kInter], boxes[member(pos)][kInter], 1, bytes, inter,
                 LinkClass::kInterNode, 1.0, socket_factor, mpi_stream_Bps * streams);
      return;
  }
}

void Job::State::record_choice(double bytes) {
  // What rank 0's bucket ran as, for summary.json: NCCL's choice for the whole communicator, or
  // for the hierarchical algorithm its inter-node stage's (the intra-node stages are rings).
  using calibration::NcclAlgo;
  calibration::CollectiveChoice c;
  if (algorithm == Algorithm::kHierarchical && !per_bucket) {
    const bool across = nodes > 1 && spec.collectives_inter;
    const auto* m = across ? spec.collectives_inter.get() : spec.collectives_intra.get();
    if (!m) return;
    const NcclAlgo a =
        across && spec.allreduce.inter_node == Algorithm::kTree ? NcclAlgo::kTree : NcclAlgo::kRing;
    c = m->choose(across ? bytes / gpus : bytes, a, spec.allreduce.protocol);
  } else {
    c = model->choose(bytes, nccl_algo_of(spec.allreduce.algorithm), spec.allreduce.protocol);
  }
  choice_counts[std::string(to_string(c.algo)) + "/" + std::string(to_string(c.proto))] += 1;
  any_measured = any_measured || c.tier == calibration::CollectiveTier::kMeasured;
}

void Job::State::hold_sms(int rank, double t0_s, int blocks) {
  const int sms = program_of(rank).gpu_sms;
  if (blocks <= 0 || sms <= 0) return;
  clock[rank].contend(t0_s, sg4::Engine::get_clock(),
                      std::min(1.0, static_cast<double>(blocks) / sms));
}

void Job::State::all_reduce(int rank, double buffer_bytes, int& intra_epoch) {
  const int node = rank / gpus, local = rank % gpus;
  const BucketPlan bp = plan_bucket(buffer_bytes);
  if (model && rank == 0) record_choice(buffer_bytes);
  const double bytes = buffer_bytes * bp.wire_factor;  // what the protocol puts on the links
  // Where the current call (or stage) began: the SMs it holds slow the rank's compute.
  double t_stage = sg4::Engine::get_clock();
  switch (algorithm) {
    case Algorithm::kRing: {
      std::vector<RingHop> hops(rings.size());
      for (std::size_t k = 0; k < rings.size(); ++k) {
        const int next = flat_next(static_cast<int>(k), rank);
        RingHop& h = hops[k];
        h.to = k == 0 ? mailbox[next][kFlat] : ring_box[next][k - 1];
        h.from = k == 0 ? mailbox[rank][kFlat] : ring_box[rank][k - 1];
        const bool between = next / gpus != node;
        h.cls = between ? LinkClass::kInterNode : LinkClass::kIntraNode;
        h.flow_factor = between ? socket_factor : 1.0;
        h.rate = between ? mpi_stream_Bps : std::numeric_limits<double>::infinity();
      }
      rings_phase(hops, 2 * (ranks - 1), bytes / ranks, flat, 1.0);
      break;
    }
    case Algorithm::kTree: {
      std::vector<int> members(ranks);
      for (int r = 0; r < ranks; ++r) members[r] = r;
      tree_all_reduce(mailbox, members, rank, bytes, tree_flat, LinkClass::kInterNode, true, 1);
      break;
    }
    default: {
      const double shard = bytes / gpus;
      const double inter_bytes = buffer_bytes * bp.inter_wire_factor;
      if (per_bucket && nodes > 1) {
        pipelined_hierarchical(rank, shard, inter_bytes, bp.inter, intra_epoch);
        break;
      }
      if (gpus > 1) intra_phase(rank, gpus - 1, shard, intra_epoch);  // reduce-scatter
      hold_sms(rank, t_stage, bp.sm_blocks);
      t_stage = sg4::Engine::get_clock();
      if (rail_mode) {
        // The inter-node stage is the rail actors' (every node); node 0's ranks wait for it.
        inter_gate->wait(hand_to_rails(rank, inter_bytes, bp.inter));
      } else if (nodes > 1) {
        inter_stage(mailbox, nodes, gpus, local, node, inter_bytes / gpus, bp.inter, 1);
      }
      hold_sms(rank, t_stage, bp.inter_sm_blocks);
      t_stage = sg4::Engine::get_clock();
      if (gpus > 1) intra_phase(rank, gpus - 1, shard, intra_epoch);  // all-gather
      break;
    }
  }
  if (bp.extra_latency_s > 0.0) sg4::this_actor::sleep_for(bp.extra_latency_s);
  hold_sms(rank, t_stage, bp.sm_blocks);
}

void Job::State::pipelined_hierarchical(int rank, double shard, double inter_bytes,
                                        InterStage stage, int& intra_epoch) {
  const int node = rank / gpus, local = rank % gpus;
  if (rail_mode) {
    const int epoch = hand_to_rails(rank, inter_bytes, stage);
    if (gpus > 1) intra_phase(rank, 2 * (gpus - 1), shard, intra_epoch);
    inter_gate->wait(epoch);
    return;
  }
  sg4::ActorPtr stage_actor =
      sg4::Actor::create("inter", gpu_host[rank], [this, node, local, inter_bytes, stage] {
        inter_stage(mailbox, nodes, gpus, local, node, inter_bytes / gpus, stage, 1);
      });
  if (gpus > 1) intra_phase(rank, 2 * (gpus - 1), shard, intra_epoch);
  stage_actor->join();
}

int Job::State::hand_to_rails(int rank, double inter_bytes, InterStage stage) {
  const int epoch = bucket_epoch[rank]++;
  if (rank == 0) {
    epoch_bytes.push_back(inter_bytes);
    epoch_inter.push_back(stage);
  }
  rs_gate->arrive(epoch);
  return epoch;
}

void Job::State::rail_main(int rail) {
  const int n_groups = static_cast<int>(groups.size());
  const int node = rail / n_groups, group = rail % n_groups;
  const double share = static_cast<double>(groups[group].size()) / gpus;
  for (int epoch = 0;; ++epoch) {
    rs_gate->wait(epoch);
    const double bytes = epoch_bytes[epoch];
    if (bytes < 0.0) return;
    // The group's shards, carried as one flow (one MPI stream per GPU of the group).
    inter_stage(rail_mailbox, nodes, n_groups, group, node, bytes * share, epoch_inter[epoch],
                static_cast<int>(groups[group].size()));
    if (node == 0) inter_gate->arrive(epoch);
  }
}

}  // namespace scalecast::sim
