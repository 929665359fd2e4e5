// The pipeline job's actors: one per simulated pipeline stage running its schedule, one per stage
// for its data-parallel communication stream, and the iteration barrier (sim/pipeline_job.hpp).

#include <algorithm>
#include <stdexcept>

#include "sim/pipeline_job_state.hpp"

namespace scalecast::sim {

void PipelineJob::State::run_segments(int slot, int it, const std::vector<PricedSegment>& segs,
                                      const std::string& label,
                                      const std::function<void(std::size_t)>& before,
                                      const std::function<void(std::size_t)>& after) {
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
    add_wait(slot, x.group, it, sg4::Engine::get_clock() - t0);
    record(slot, group_name(x.group), it, t0, x.comm->name);
    if (x.learn) remember(slot, *x.comm, x.call.done_at_s() - x.start_s);
  };
  const auto drain = [&] {
    for (Pending& x : pending) finish(x);
    pending.clear();
  };
  for (std::size_t k = 0; k < segs.size(); ++k) {
    const PricedSegment& seg = segs[k];
    if (before) before(k);
    const double t0 = sg4::Engine::get_clock();
    const double compute_s = seg.compute_s * stretch[static_cast<std::size_t>(slot)];
    if (compute_s > 0.0) sg4::this_actor::sleep_for(compute_s);
    if (measured(it)) acc_of(slot).compute_s += compute_s;
    record(slot, "compute", it, t0, label + ".seg" + std::to_string(k));
    if (after) after(k);
    drain();
    for (const models::LlmComm& c : seg.comms) {
      Communicator& comm = comm_of(slot, c.group);
      if (comm.size() <= 1 || call_bytes(c) <= 0.0) continue;
      count_bytes(slot, c, it);
      const double now = sg4::Engine::get_clock();
      const double* known = recall(slot, c);
      Pending x{known ? CollectiveCall::ending_at(now + *known)
                      : collective_for(c.kind).start(comm, call_bytes(c), c.steps),
                c.group, now, &c, !known && private_group(slot, c.group)};
      if (spec.parallel.overlap_tp_comm && c.overlappable) {
        pending.push_back(std::move(x));
      } else {
        finish(x);
      }
    }
  }
  drain();
}

void PipelineJob::State::receive(int slot, int it, sg4::Mailbox* box, const std::string& label) {
  const double t0 = sg4::Engine::get_clock();
  auto* sent = box->get<double>();
  const double sent_s = *sent;
  delete sent;
  const double t1 = sg4::Engine::get_clock();
  if (measured(it)) {
    StageBreakdown& b = acc_of(slot);
    b.bubble_s += std::max(0.0, std::min(t1, sent_s) - t0);
    b.exposed_pp_s += t1 - std::max(t0, std::min(t1, sent_s));
  }
  if (t1 > t0) record(slot, "pp_wait", it, t0, label);
}

void PipelineJob::State::send(int slot, int it, sg4::Mailbox* box, double bytes_sent) {
  box->put_init(new double(sg4::Engine::get_clock()), static_cast<std::uint64_t>(bytes_sent))
      ->detach();
  if (measured(it) && replica_of(slot) == 0) {
    const auto& p = spec.parallel;
    bytes["pp"] += bytes_sent * p.tp * p.cp * p.dp / spec.iterations;
  }
}

void PipelineJob::State::push_dp(int slot, const models::LlmComm* c) {
  DpStream& d = stream_of(slot);
  const std::unique_lock lock(*d.mutex);
  const auto r = static_cast<std::size_t>(replica_of(slot));
  const auto k = static_cast<std::size_t>(d.posted[r]++);
  if (k == d.items.size()) {
    d.items.push_back({c, 1});
  } else if (d.items[k].comm == c) {
    ++d.items[k].arrivals;
  } else {
    throw std::logic_error("pipeline job: DP replicas launched different collectives");
  }
  if (c) ++d.pushed[r];
  d.cv->notify_all();
}

void PipelineJob::State::wait_dp(int slot, int it, int target) {
  DpStream& d = stream_of(slot);
  const double t0 = sg4::Engine::get_clock();
  {
    std::unique_lock lock(*d.mutex);
    while (d.done < target) d.cv->wait(lock);
  }
  const double waited = sg4::Engine::get_clock() - t0;
  add_wait(slot, models::CommGroup::kDp, it, waited);
  if (waited > 0.0) record(slot, "dp", it, t0, "dp.wait");
}

void PipelineJob::State::dp_main(int stage) {
  DpStream& d = dp_stream[static_cast<std::size_t>(stage)];
  int it_seen = 0;
  for (;;) {
    const models::LlmComm* c = nullptr;
    {
      std::unique_lock lock(*d.mutex);
      while (d.next == d.items.size() || d.items[d.next].arrivals < reps) d.cv->wait(lock);
      c = d.items[d.next++].comm;
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

void PipelineJob::State::barrier(int slot, int it) {
  const double t0 = sg4::Engine::get_clock();
  {
    std::unique_lock lock(*barrier_mutex);
    if (++arrived == pp * reps) {
      arrived = 0;
      ++barrier_epoch;
      iteration_end.push_back(t0);
      barrier_cv->notify_all();
    } else {
      while (barrier_epoch <= it) barrier_cv->wait(lock);
    }
  }
  if (measured(it)) acc_of(slot).bubble_s += sg4::Engine::get_clock() - t0;
  if (slot == 0 && spec.on_iteration) spec.on_iteration(it + 1, total_iterations);
}

void PipelineJob::State::stage_main(int slot) {
  const int stage = stage_of(slot);
  for (int c = stage; c < chunks; c += pp) {
    inbox(fwd_in, slot, c)->set_receiver(sg4::Actor::self());
    inbox(bwd_in, slot, c)->set_receiver(sg4::Actor::self());
  }
  const auto& p = spec.parallel;
  const auto& tasks = order[static_cast<std::size_t>(stage)];
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
    stretch[static_cast<std::size_t>(slot)] = draw_stretch(slot, it);
    std::vector<int> backwards(static_cast<std::size_t>(chunks), 0);
    // With prefetch, segment k + 1's gathers are launched when segment k starts, and the next
    // task's first ones when this task's last segment starts (FSDP's prefetch of one layer).
    int first_ready = 0;  // the current task's segment-0 gathers
    if (p.overlap_param_gather && !tasks.empty())
      first_ready = push_all(slot, piece(gathers(tasks[0]), 0));
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
          wait_dp(slot, it, step_ready[k]);  // the first forward after the optimizer
          step_ready[k] = 0;
        }
        if (!p.overlap_param_gather) ready[k] = push_all(slot, piece(g, k));
        wait_dp(slot, it, ready[k]);
        if (!p.overlap_param_gather) return;
        if (k + 1 < segments) {
          ready[k + 1] = push_all(slot, piece(g, k + 1));
        } else if (i + 1 < tasks.size()) {
          first_ready = push_all(slot, piece(gathers(tasks[i + 1]), 0));
        }
      };
      const auto after = [&](std::size_t k) {
        if (t.forward) return;
        // Gradient reductions of this segment's parameters: per micro-batch ones (ZeRO-3)
        // after every backward, the others after the chunk's last micro-batch (overlapped
        // with the rest of the backward pass).
        if (push_all(slot, piece(pcs.grad_per_mb, k)) > 0 && !p.overlap_dp_comm)
          wait_dp(slot, it, pushed_of(slot));
        if (last && p.overlap_dp_comm) push_all(slot, piece(pcs.grad, k));
      };
      if (t.forward) {
        if (t.chunk > 0) receive(slot, it, inbox(fwd_in, slot, t.chunk), label);
        run_segments(slot, it, pc.forward, label, before, after);
        if (t.chunk + 1 < chunks)
          send(slot, it, inbox(fwd_in, slot, t.chunk + 1), pc.send_forward_bytes);
      } else {
        if (t.chunk + 1 < chunks) receive(slot, it, inbox(bwd_in, slot, t.chunk), label);
        run_segments(slot, it, pc.backward, label, before, after);
        if (last) {
          // Pipelined FSDP: the post-backward of the chunk's last micro-batch reduces all.
          int target = 0;
          for (const auto& list : pcs.grad_last) target = std::max(target, push_all(slot, list));
          if (target > 0 && !p.overlap_dp_comm) wait_dp(slot, it, target);
        }
        if (t.chunk > 0) send(slot, it, inbox(bwd_in, slot, t.chunk - 1), pc.send_backward_bytes);
        ++backwards[static_cast<std::size_t>(t.chunk)];
      }
    }
    if (!p.overlap_dp_comm)
      for (int c = stage; c < chunks; c += pp)
        for (const auto& list : pieces[static_cast<std::size_t>(c)].grad) push_all(slot, list);
    wait_dp(slot, it, pushed_of(slot));
    double opt = 0.0;
    for (int c = stage; c < chunks; c += pp)
      opt += spec.chunks[static_cast<std::size_t>(c)].optimizer_s;
    opt *= stretch[static_cast<std::size_t>(slot)];
    const double t0 = sg4::Engine::get_clock();
    if (opt > 0.0) sg4::this_actor::sleep_for(opt);
    if (measured(it)) acc_of(slot).optimizer_s += opt;
    record(slot, "compute", it, t0, "optimizer");
    // Distributed optimizer / ZeRO-1/2: the updated shards are all-gathered; with the overlap
    // switch under the next iteration's forward (each chunk's first forward waits for its
    // own), otherwise now.
    for (int c = stage; c < chunks; c += pp) {
      auto& targets = chunk_ready[static_cast<std::size_t>(c)];
      const auto& steps = pieces[static_cast<std::size_t>(c)].gather_step;
      targets.assign(steps.size(), 0);
      for (std::size_t k = 0; k < steps.size(); ++k) targets[k] = push_all(slot, steps[k]);
    }
    if (!p.overlap_param_gather) wait_dp(slot, it, pushed_of(slot));
    barrier(slot, it);
  }
  push_dp(slot, nullptr);
}

}  // namespace scalecast::sim
