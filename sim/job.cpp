#include "sim/job.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include "sim/bucket_plan.hpp"
#include "sim/engine_setup.hpp"
#include "sim/host_rings.hpp"
#include "sim/job_state.hpp"
#include "sim/simulated_platform.hpp"
#include "sim/variability.hpp"

namespace sg4 = simgrid::s4u;

namespace scalecast::sim {
namespace {

Variability variability_of(const JobSpec& s) {
  return {s.compute_noise_cv, s.straggler_fraction, s.straggler_slowdown, s.seed};
}

}  // namespace

Gate::Gate(int need)
    : need_(need), mutex_(sg4::Mutex::create()), cv_(sg4::ConditionVariable::create()) {}

void Gate::arrive(int epoch) {
  std::unique_lock lock(*mutex_);
  if (static_cast<int>(arrivals_.size()) <= epoch) arrivals_.resize(epoch + 1, 0);
  if (++arrivals_[epoch] == need_) {
    while (opened_ < static_cast<int>(arrivals_.size()) && arrivals_[opened_] == need_) ++opened_;
    cv_->notify_all();
  }
}

void Gate::wait(int epoch) {
  std::unique_lock lock(*mutex_);
  while (opened_ <= epoch) cv_->wait(lock);
}

namespace {

// A heterogeneous job's programs: one per node, in range, the same gradients in the same order
// (they are one model priced on different GPUs), and `program` standing for node 0's.
void check_heterogeneous(const JobSpec& spec, int nodes) {
  if (static_cast<int>(spec.node_program.size()) != nodes)
    throw std::invalid_argument("job '" + spec.name + "': node_program has " +
                                std::to_string(spec.node_program.size()) + " entries for " +
                                std::to_string(nodes) + " nodes");
  for (int k : spec.node_program)
    if (k < 0 || k >= static_cast<int>(spec.programs.size()))
      throw std::invalid_argument("job '" + spec.name + "': node_program entry " +
                                  std::to_string(k) + " is not a program index");
  for (const StepProgram& p : spec.programs) {
    bool same = p.gradients.size() == spec.program.gradients.size() &&
                p.batch_per_gpu == spec.program.batch_per_gpu;
    for (std::size_t g = 0; same && g < p.gradients.size(); ++g)
      same = p.gradients[g].bytes == spec.program.gradients[g].bytes;
    if (!same)
      throw std::invalid_argument("job '" + spec.name +
                                  "': the programs of a heterogeneous job must have the same "
                                  "batch and gradients as `program`");
  }
}

}  // namespace

Job::State::State(const SimulatedPlatform& platform, JobSpec s)
    : spec(std::move(s)), recorder(spec.warmup, spec.iterations) {
  nodes = static_cast<int>(spec.nodes.size());
  gpus = spec.gpus_per_node;
  ranks = nodes * gpus;
  if (nodes < 1 || gpus < 1) throw std::invalid_argument("job needs at least one node and GPU");
  model = spec.collectives.get();
  if (needs_collective_model(spec.allreduce.algorithm) && !model)
    throw std::invalid_argument("job '" + spec.name + "': all-reduce algorithm " +
                                std::string(to_string(spec.allreduce.algorithm)) +
                                " needs the NCCL collective model");
  per_bucket = model && (spec.allreduce.algorithm == Algorithm::kAuto ||
                         needs_collective_model(spec.allreduce.algorithm));
  algorithm = job_pattern(spec.allreduce.algorithm, per_bucket, nodes, gpus);
  if (spec.allreduce.library == Library::kNccl && spec.allreduce.transport == Transport::kTcp) {
    if (!(spec.tcp.nccl_link_fraction > 0.0 && spec.tcp.nccl_link_fraction <= 1.0))
      throw std::invalid_argument("job '" + spec.name +
                                  "': NCCL's socket share of a link must be in (0, 1]");
    socket_factor = spec.tcp.nccl_flow_factor();
  }
  if (spec.allreduce.library == Library::kMpi && spec.allreduce.transport == Transport::kTcp)
    mpi_stream_Bps = spec.tcp.stream_rate_Bps();
  fidelity = resolve_fidelity(spec.fidelity, ranks);
  const bool varied = variability_of(spec).varied();
  heterogeneous = !spec.node_program.empty();
  if (heterogeneous) check_heterogeneous(spec, nodes);
  // Parameter servers and MPI on the CPU are simulated rank by rank (no node-0 shortcut).
  const bool host_exchange = spec.ps.tasks > 0 || spec.allreduce.library == Library::kMpiCpu;
  shortcut = spec.symmetric && !varied && !heterogeneous && !host_exchange &&
             fidelity == Fidelity::kWave && nodes > 1;
  schedule = compute_schedule(spec.program);
  for (const StepProgram& p : spec.programs) schedules.push_back(compute_schedule(p));
  apply_handover(spec.allreduce, schedule);
  for (ComputeSchedule& each : schedules) apply_handover(spec.allreduce, each);
  traced.assign(nodes, 0);
  traced[0] = 1;
  for (int n : spec.trace_nodes)
    if (n >= 0 && n < nodes) traced[n] = 1;
  for (int n = 0; n < nodes; ++n) {
    const int pn = spec.nodes[n];
    if (pn < 0 || pn >= platform.node_count() || platform.gpus_per_node(pn) < gpus)
      throw std::invalid_argument("job '" + spec.name + "' uses node " + std::to_string(pn) +
                                  " which does not exist or has too few GPUs");
    for (int g = 0; g < gpus; ++g) {
      platform_node.push_back(pn);
      gpu_host.push_back(platform.gpu(pn, g));
      cpu_host.push_back(platform.cpu(pn, platform.socket_of_gpu(pn, g)));
    }
  }
  setup_rings(platform);
  rail_mode = shortcut && algorithm == Algorithm::kHierarchical;
  if (rail_mode) setup_rails();
  // Only the channels the algorithm uses: a mailbox is a sizeable kernel object.
  std::vector<Channel> channels;
  if (algorithm == Algorithm::kRing) channels = {kFlat};
  if (algorithm == Algorithm::kTree) channels = {kTreeUp, kTreeDown, kTreeUpB, kTreeDownB};
  if (algorithm == Algorithm::kHierarchical) {
    channels = {kIntra, kInter};
    if (spec.allreduce.inter_node == Algorithm::kTree)
      channels = {kIntra, kTreeUp, kTreeDown, kTreeUpB, kTreeDownB};
    if (per_bucket) channels = {kIntra, kInter, kTreeUp, kTreeDown, kTreeUpB, kTreeDownB};
  }
  mailbox.assign(ranks, {});
  for (int r = 0; r < ranks && ranks > 1; ++r)
    for (Channel c : channels) {
      // The node-0 shortcut never sends intra-node messages outside node 0; in rail mode the
      // rail actors carry the inter-node stage.
      if (c == kIntra && (gpus == 1 || (shortcut && r >= gpus))) continue;
      if (rail_mode && c != kIntra) continue;
      mailbox[r][c] = sg4::Mailbox::by_name(spec.name + "/" + std::to_string(r) + "/" +
                                            std::to_string(static_cast<int>(c)));
    }
  // Rings 1, 2...: on the channel of ring 0 (kFlat for the flat ring, kIntra otherwise).
  const bool flat_rings = algorithm == Algorithm::kRing;
  if (rings.size() > 1 && (flat_rings || algorithm == Algorithm::kHierarchical)) {
    ring_box.assign(ranks, {});
    const Channel c = flat_rings ? kFlat : kIntra;
    for (int r = 0; r < ranks; ++r) {
      if (!mailbox[r][c]) continue;
      for (std::size_t k = 1; k < rings.size(); ++k)
        ring_box[r].push_back(sg4::Mailbox::by_name(spec.name + "/" + std::to_string(r) + "/ring" +
                                                    std::to_string(k)));
    }
  }
  plan.resize(spec.warmup + spec.iterations);
  plan_done.assign(plan.size(), 0);
  plan_mutex = sg4::Mutex::create();
  plan_cv = sg4::ConditionVariable::create();
  static_buckets = sim::static_buckets(spec.program, spec.allreduce);
  bucket_epoch.assign(ranks, 0);
  stretch.assign(ranks, 1.0);
  clock.resize(static_cast<std::size_t>(ranks));
  intra_gate = std::make_unique<Gate>(gpus);
  copy_gate = std::make_unique<Gate>(gpus);
  if (fidelity == Fidelity::kWave || model) measure_edges();
  if (spec.input.staged()) setup_input(platform);
  if (ps_mode()) setup_ps(platform);
  if (cpu_mpi()) setup_cpu_mpi();
}

void Job::State::setup_rings(const SimulatedPlatform& platform) {
  // From node 0's GPUs: a route of one link between two GPUs is a direct link. The job's nodes
  // share node 0's rings; where a node has another GPU type (a heterogeneous job), every node
  // keeps the ring in GPU-number order.
  rings = {std::vector<int>(gpus)};
  for (int g = 0; g < gpus; ++g) rings[0][g] = g;
  bool same = true;
  for (int n = 1; n < nodes && same; ++n)
    same = platform.gpu_type(spec.nodes[n]) == platform.gpu_type(spec.nodes[0]);
  if (same)
    rings = rings_over_hosts({gpu_host.begin(), gpu_host.begin() + gpus},
                             platform.gpu_link_unit_Bps(spec.nodes[0]));
  ring_pos.assign(rings.size(), std::vector<int>(gpus, 0));
  for (std::size_t k = 0; k < rings.size(); ++k)
    for (int p = 0; p < gpus; ++p) ring_pos[k][rings[k][p]] = p;
}

int Job::State::intra_next(int ring, int rank) const {
  const int node = rank / gpus, local = rank % gpus;
  const std::vector<int>& order = rings[ring];
  return node * gpus + order[(ring_pos[ring][local] + 1) % gpus];
}

int Job::State::flat_next(int ring, int rank) const {
  // Through the node's GPUs in ring order, then from the last to the next node's first.
  const int node = rank / gpus, local = rank % gpus;
  const std::vector<int>& order = rings[ring];
  const int p = ring_pos[ring][local];
  if (p + 1 < gpus) return node * gpus + order[p + 1];
  return ((node + 1) % nodes) * gpus + order[0];
}

void Job::State::setup_rails() {
  // GPUs grouped by the NIC they send through, in order of first appearance.
  std::vector<int> key = spec.nic_groups;
  if (static_cast<int>(key.size()) != gpus) {
    key.resize(gpus);
    for (int g = 0; g < gpus; ++g) key[g] = g;
  }
  std::vector<int> seen;
  for (int g = 0; g < gpus; ++g) {
    const auto it = std::find(seen.begin(), seen.end(), key[g]);
    if (it == seen.end()) {
      seen.push_back(key[g]);
      groups.push_back({g});
    } else {
      groups[it - seen.begin()].push_back(g);
    }
  }
  const int n_groups = static_cast<int>(groups.size());
  std::vector<Channel> channels = {kInter};
  if (spec.allreduce.inter_node == Algorithm::kTree)
    channels = {kTreeUp, kTreeDown, kTreeUpB, kTreeDownB};
  if (per_bucket) channels = {kInter, kTreeUp, kTreeDown, kTreeUpB, kTreeDownB};
  rail_mailbox.assign(static_cast<std::size_t>(nodes) * n_groups, {});
  for (int n = 0; n < nodes; ++n)
    for (int j = 0; j < n_groups; ++j) {
      const int a = n * n_groups + j;
      rail_host.push_back(gpu_host[n * gpus + groups[j].front()]);
      for (Channel c : channels)
        rail_mailbox[a][c] = sg4::Mailbox::by_name(spec.name + "/rail" + std::to_string(a) + "/" +
                                                   std::to_string(static_cast<int>(c)));
    }
  rs_gate = std::make_unique<Gate>(gpus);
  inter_gate = std::make_unique<Gate>(n_groups);
}

void Job::State::copy_input(int rank, int iteration) {
  const int node = rank / gpus;
  if (spec.program.input_bytes <= 0.0) return;
  if (shortcut && node != 0) {
    copy_gate->wait(iteration);
    return;
  }
  const double t0 = sg4::Engine::get_clock();
  sg4::Comm::sendto_init(cpu_host[rank], gpu_host[rank])
      ->set_payload_size(static_cast<std::uint64_t>(spec.program.input_bytes))
      ->start()
      ->wait();
  recorder.add_bytes(LinkClass::kHostDevice, spec.program.input_bytes, shortcut ? nodes : 1);
  if (traced[node])
    recorder.add({rank, Stream::kCopy, iteration, t0, sg4::Engine::get_clock(), "h2d_input", "",
                  spec.program.input_bytes});
  if (shortcut) copy_gate->arrive(iteration);
}

double Job::State::cycle_phase(int iteration) const {
  if (spec.allreduce.cycle_phase) return *spec.allreduce.cycle_phase;
  // Stratified over the measured iterations; the warm-up ones continue the pattern backwards.
  const int n = std::max(1, spec.iterations);
  const int m = ((iteration - spec.warmup) % n + n) % n;
  return (m + 0.5) / n;
}

void Job::State::decide(int iteration, double t_fwd, int k, double& tick_state) {
  std::vector<Decision>& p = plan[iteration];
  std::vector<double> ready = schedule_of(0).gradient_ready_s;
  for (double& r : ready) r *= stretch[0];
  const int n_grad = static_cast<int>(ready.size());
  const double now = sg4::Engine::get_clock();
  // Rank 0's compute stream, slowed where its earlier buckets held SMs.
  const auto at = [this, &ready](int g) { return clock[0].wall_at(ready[g]); };
  if (!coordinated()) {
    if (k >= static_cast<int>(static_buckets.size())) return;
    const Decision& d = static_buckets[k];
    sg4::this_actor::sleep_until(std::max(now, at(d.last)));
    p.push_back(d);
    return;
  }
  const int g0 = p.empty() ? 0 : p.back().last + 1;
  if (g0 >= n_grad) return;
  const double cycle = spec.allreduce.cycle_time_s;
  // The coordinator's ticks sit at t_fwd + (phase + k) x cycle (collective_config.hpp).
  const double phase = cycle_phase(iteration) * cycle;
  double tick = tick_state;
  // A tensor left over at the last tick (fusion buffer full) goes at once; otherwise wait for
  // the first Horovod cycle tick at which it is ready. The rounding slack is relative (a tensor
  // ready a hair past a tick still goes at it): an absolute slack in cycles put a tick before
  // the tensor when the cycle is long against the step, and empty buckets went out.
  if (!(at(g0) <= tick_state)) {
    const double earliest = std::max(now, at(g0));
    tick = t_fwd + phase + std::ceil((earliest - t_fwd - phase) / cycle * (1.0 - 1e-12)) * cycle;
    sg4::this_actor::sleep_until(tick);
    tick_state = tick;
  }
  // g0 is ready (waited for above, or left over): every bucket carries at least it.
  Decision d{spec.program.gradients[g0].bytes, g0, g0};
  for (int g = g0 + 1; g < n_grad && at(g) <= tick; ++g) {
    const double b = spec.program.gradients[g].bytes;
    if (spec.allreduce.fusion_bytes > 0.0 && d.bytes + b > spec.allreduce.fusion_bytes) break;
    d.bytes += b;
    d.last = g;
  }
  p.push_back(d);
}

bool Job::State::next_decision(int rank, int iteration, double t_fwd, int k, Decision& out) {
  if (!coordinated()) {
    // Static buckets: every rank knows the plan; a bucket goes once its last tensor is ready.
    if (k >= static_cast<int>(static_buckets.size())) return false;
    out = static_buckets[k];
    const double ready =
        clock[rank].wall_at(stretch[rank] * schedule_of(rank).gradient_ready_s[out.last]);
    if (ready > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(ready);
    return true;
  }
  if (rank == 0) {  // the coordinator
    if (k == 0) last_tick = -1.0;
    const std::size_t before = plan[iteration].size();
    decide(iteration, t_fwd, k, last_tick);
    std::unique_lock lock(*plan_mutex);
    if (plan[iteration].size() == before) plan_done[iteration] = 1;
    plan_cv->notify_all();
  } else {
    std::unique_lock lock(*plan_mutex);
    while (static_cast<int>(plan[iteration].size()) <= k && !plan_done[iteration])
      plan_cv->wait(lock);
  }
  if (static_cast<int>(plan[iteration].size()) <= k) return false;
  out = plan[iteration][k];
  // A rank joins the bucket's all-reduce once its own tensors are ready (with variability a
  // rank can be behind the coordinator).
  const double own_ready =
      clock[rank].wall_at(stretch[rank] * schedule_of(rank).gradient_ready_s[out.last]);
  if (own_ready > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(own_ready);
  return true;
}

int Job::State::sync_gradients(int rank, int iteration, double t_fwd, int& intra_epoch) {
  if (ranks == 1) return 0;
  int k = 0;
  Decision d;
  while (next_decision(rank, iteration, t_fwd, k, d)) {
    const double t0 = sg4::Engine::get_clock();
    // An NCCL call's kernels hold SMs, and the compute overlapping it runs on the SMs left
    // (all_reduce tells the rank's clock); MPI on the CPU runs no GPU kernel.
    if (cpu_mpi())
      cpu_all_reduce(rank, d.bytes, d.last > d.first);
    else
      all_reduce(rank, d.bytes, intra_epoch);
    if (traced[rank / gpus])
      recorder.add({rank, Stream::kComm, iteration, t0, sg4::Engine::get_clock(),
                    "allreduce.bucket" + std::to_string(k), "", d.bytes});
    ++k;
  }
  return k;
}

double Job::State::draw_stretch(int rank, int iteration) const {
  return variability_of(spec).stretch(rank, iteration);
}

void Job::State::rank_main(int rank) {
  const int node = rank / gpus;
  const StepProgram& prog = program_of(rank);
  const ComputeSchedule& sched = schedule_of(rank);
  const int total = spec.warmup + spec.iterations;
  int intra_epoch = 0;
  for (int it = 0; it < total; ++it) {
    const double t_iter = sg4::Engine::get_clock();
    const double f = stretch[rank] = draw_stretch(rank, it);
    // Without prefetch the batch is copied before the forward pass; with prefetch the copy of
    // this batch ran during the previous step (modelled as the copy stream's first activity of
    // the step, so a copy longer than compute shows as exposed copy time). A staged input
    // pipeline (job_input.cpp) has prepared the batch ahead, or compute waits for it.
    double t_fwd = t_iter;
    if (spec.input.staged()) {
      t_fwd = wait_batch(rank, it, t_iter);
    } else {
      copy_input(rank, it);
      if (!spec.prefetch) t_fwd = sg4::Engine::get_clock();
    }
    ComputeClock& cc = clock[rank];
    cc.start(t_fwd);
    if (traced[node] && sched.fixed_s > 0.0)
      recorder.add({rank, Stream::kCompute, it, t_fwd, t_fwd + f * sched.fixed_s, "step.fixed",
                    kFixedTier, 0.0});
    const auto record_ops = [&] {
      if (traced[node])
        for (std::size_t i = 0; i < prog.ops.size(); ++i)
          if (!prog.ops[i].optimizer)
            recorder.add({rank, prog.ops[i].stream, it, cc.wall_at(f * sched.op_start_s[i]),
                          cc.wall_at(f * sched.op_end_s[i]), prog.ops[i].name, prog.ops[i].tier,
                          0.0});
    };
    // Where collectives may hold SMs the ops are recorded once the step's collectives are known
    // (the compute they overlapped ran on the SMs those left); elsewhere before, as always, so
    // those outputs keep their bytes (event order included).
    const bool contended = sm_contention_possible(rank);
    if (!contended) record_ops();
    const int buckets =
        ps_mode() ? ps_exchange(rank, it, t_fwd) : sync_gradients(rank, it, t_fwd, intra_epoch);
    if (contended) record_ops();
    sg4::this_actor::sleep_until(
        std::max(sg4::Engine::get_clock(), cc.wall_at(f * sched.backward_end_s)));
    if (rank == 0 && it >= spec.warmup) compute_lost_s += cc.lost_s(f * sched.backward_end_s);
    const double t_opt = sg4::Engine::get_clock();
    // With parameter servers the update runs on the PS tasks, not on the worker.
    if (traced[node] && !ps_mode())
      for (std::size_t i = 0; i < prog.ops.size(); ++i)
        if (prog.ops[i].optimizer)
          recorder.add({rank, prog.ops[i].stream, it, t_opt + f * sched.op_start_s[i],
                        t_opt + f * sched.op_end_s[i], prog.ops[i].name, prog.ops[i].tier, 0.0});
    if (!ps_mode()) sg4::this_actor::sleep_for(f * sched.optimizer_s);
    if (rank == 0) {
      recorder.mark_iteration(it, t_iter, sg4::Engine::get_clock(), buckets);
      if (spec.on_iteration) spec.on_iteration(it + 1, total);
    }
    if (spec.input.staged()) release_batch(rank, it);
  }
  if (rail_mode) {  // tell the rail actors there is no further bucket
    if (rank == 0) {
      epoch_bytes.push_back(-1.0);
      epoch_inter.push_back(InterStage::kRing);
    }
    rs_gate->arrive(bucket_epoch[rank]++);
  }
}

Job::Job(const SimulatedPlatform& platform, JobSpec spec)
    : state_(std::make_unique<State>(platform, std::move(spec))) {
  State* s = state_.get();
  // Rail mode: rank actors on node 0 only (the others are its mirror images).
  const int rank_actors = s->rail_mode ? s->gpus : s->ranks;
  for (int r = 0; r < rank_actors; ++r)
    sg4::Actor::create(s->spec.name + "/" + std::to_string(r), s->gpu_host[r],
                       [s, r] { s->rank_main(r); });
  if (s->ps_mode()) s->spawn_ps_actors();
  if (s->cpu_mpi()) s->spawn_cpu_actors();
  // Rail actors are the many ones at scale (33,334 at 100,002 GPUs): a smaller stack
  // (kRailStackKib, engine_setup.hpp, which says how it was sized and how the tests guard it).
  for (int a = 0; a < static_cast<int>(s->rail_host.size()); ++a)
    sg4::Actor::init(s->spec.name + "/rail" + std::to_string(a), s->rail_host[a])
        ->set_stacksize(kRailStackKib)
        ->start([s, a] { s->rail_main(a); });
  if (s->spec.input.staged()) {
    // Input stages per rank with a pipeline, on the rank's CPU host.
    const InputPipelineSpec& in = s->spec.input;
    for (int r = 0; r < s->ranks; ++r) {
      if (!s->has_pipe(r)) continue;
      if (in.source == InputSource::kNvme)
        sg4::Actor::create(s->spec.name + "/read" + std::to_string(r), s->cpu_host[r],
                           [s, r] { s->input_stage(r, State::kReadStage); });
      if (in.decode_samples_per_s > 0.0)
        sg4::Actor::create(s->spec.name + "/decode" + std::to_string(r), s->cpu_host[r],
                           [s, r] { s->input_stage(r, State::kDecodeStage); });
      sg4::Actor::create(s->spec.name + "/h2d" + std::to_string(r), s->cpu_host[r],
                         [s, r] { s->input_stage(r, State::kCopyStage); });
    }
    for (int m = 0; m < static_cast<int>(s->readers.size()); ++m)
      sg4::Actor::create(s->spec.name + "/pfsread" + std::to_string(m), s->readers[m].host,
                         [s, m] { s->pfs_reader_main(m); });
    for (int k = 0; k < static_cast<int>(s->pfs.size()); ++k)
      sg4::Actor::create(s->spec.name + "/pfs" + std::to_string(k), s->pfs[k].host,
                         [s, k] { s->pfs_server_main(k); });
  }
}

Job::~Job() = default;

JobResult Job::result() const {
  const State& s = *state_;
  JobResult r;
  r.name = s.spec.name;
  r.nodes = s.nodes;
  r.gpus_per_node = s.gpus;
  r.gpus = s.ranks;
  r.batch_per_gpu = s.spec.program.batch_per_gpu;
  r.algorithm = s.algorithm;
  r.fidelity = s.fidelity;
  r.iterations = s.recorder.iterations();
  const double n = std::max<std::size_t>(1, r.iterations.size());
  for (const IterationRecord& it : r.iterations) {
    r.iteration_time_s += (it.end_s - it.start_s) / n;
    r.breakdown.compute_s += it.breakdown.compute_s / n;
    r.breakdown.fixed_s += it.breakdown.fixed_s / n;
    r.breakdown.exposed_comm_s += it.breakdown.exposed_comm_s / n;
    r.breakdown.io_stall_s += it.breakdown.io_stall_s / n;
    r.breakdown.copy_s += it.breakdown.copy_s / n;
    r.breakdown.idle_s += it.breakdown.idle_s / n;
    r.comm_total_s += it.comm_total_s / n;
    r.buckets_per_iteration += it.buckets / n;
  }
  // Rank 0 counted every iteration's buckets, warm-up included.
  const double all_iterations = std::max<std::size_t>(1, s.plan.size());
  for (const auto& [label, count] : s.choice_counts)
    r.collective_choices[label] = count / all_iterations;
  if (s.model) r.collective_tier = s.any_measured ? "measured" : "datasheet";
  r.compute_lost_to_collectives_s = s.compute_lost_s / n;
  const auto count_tiers = [&r](const StepProgram& p) {
    for (const ProgramOp& op : p.ops) {
      // The input copy is priced by the platform's link, not a cost model; the op standing for
      // micro-batches 1..K-1 of gradient accumulation repeats the ops counted here, so the
      // shares are those of one micro-batch's step.
      if (op.tier.empty() || op.tier == kAccumulationTier) continue;
      JobResult::TierUse& u = r.op_tiers[op.tier];
      ++u.ops;
      u.seconds += op.duration_s;
    }
    r.above_peak_ops += p.above_peak_ops;
    r.above_peak_max_ratio = std::max(r.above_peak_max_ratio, p.above_peak_max_ratio);
  };
  if (s.spec.programs.empty())
    count_tiers(s.spec.program);
  else
    for (const StepProgram& p : s.spec.programs) count_tiers(p);
  if (r.iteration_time_s > 0.0) {
    r.throughput_samples_per_s = r.gpus * r.batch_per_gpu / r.iteration_time_s;
    r.gpu_utilization = r.breakdown.compute_s / r.iteration_time_s;
  }
  r.bytes_per_iteration = s.recorder.bytes_per_iteration();
  r.intervals = s.recorder.intervals();
  r.input = s.spec.input;
  return r;
}

}  // namespace scalecast::sim
