// Parameter servers (sim/parameter_server.hpp) in Job::State. Each worker rank and PS task are
// connected by one stream (one gRPC channel over one TCP connection), simulated by two actors:
// the worker's end on its GPU pushes the task's gradients in ready order, each as soon as the
// backward pass has produced it, then waits for the task's variables; the task's end on the
// task's host receives each push and adds it into the task's memory (one update at a time, at
// the task's memory bandwidth: `memory` mutex), then sends the variables back. Synchronous
// training adds one update actor per task that applies the accumulated gradients once every
// worker has pushed; the pulls wait for it. Pushes and pulls are SimGrid messages between the
// worker's GPU and the task's host on the platform's routes (capped at the TCP stream rate with
// transport tcp), so a task's NIC carries all remote workers' traffic. Each process (task or
// worker) then takes every received tensor out of gRPC on its one polling thread
// (ps.receive_Bps, kTfGrpcReceiveBps; ps.receive_large_Bps for tensors from 128 MB): a task's
// pushes one after the other, a worker's pulls likewise. A worker on the GPU that holds the task's
// variables moves nothing over a route, but it and the task are two processes, so its tensors still
// pass the receiving thread.

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/job_state.hpp"
#include "sim/simulated_platform.hpp"

namespace sg4 = simgrid::s4u;

namespace scalecast::sim {

namespace {
int payload_token;  // messages carry no data; only their simulated size matters
}  // namespace

void Job::State::host_flow(sg4::Host* from, sg4::Host* to, double bytes) {
  if (bytes <= 0.0 || from == to) return;
  sg4::Comm::sendto_init(from, to)->set_payload_size(static_cast<std::uint64_t>(bytes))->wait();
}

void Job::State::send_capped(sg4::Mailbox* to, double bytes, double rate) {
  sg4::CommPtr c = to->put_init(&payload_token, static_cast<std::uint64_t>(std::max(0.0, bytes)));
  if (std::isfinite(rate)) c->set_rate(rate);
  c->wait();
}

double Job::State::stream_cap(int node_a, int node_b, bool loopback_tcp) const {
  if (spec.allreduce.transport != Transport::kTcp) return std::numeric_limits<double>::infinity();
  if (node_a == node_b && !loopback_tcp) return std::numeric_limits<double>::infinity();
  return spec.tcp.stream_rate_Bps();
}

void Job::State::setup_ps(const SimulatedPlatform& platform) {
  const int tasks = spec.ps.tasks;
  if (static_cast<int>(spec.ps_nodes.size()) != tasks ||
      static_cast<int>(spec.ps_memory_Bps.size()) != tasks)
    throw std::invalid_argument("job '" + spec.name + "': " + std::to_string(tasks) +
                                " parameter-server tasks need as many ps_nodes and "
                                "ps_memory_Bps entries");
  const std::vector<int> shard = ps_shards(spec.program, tasks, spec.ps.sharding);
  ps.resize(tasks);
  for (int k = 0; k < tasks; ++k) {
    const int node = spec.ps_nodes[k];
    if (node < 0 || node >= platform.node_count())
      throw std::invalid_argument("job '" + spec.name + "': parameter-server task " +
                                  std::to_string(k) + " is on node " + std::to_string(node) +
                                  ", which the platform does not have");
    if (!(spec.ps_memory_Bps[k] > 0.0))
      throw std::invalid_argument("job '" + spec.name + "': parameter-server task " +
                                  std::to_string(k) + " has no memory bandwidth to update at");
    PsTask& t = ps[k];
    t.node = node;
    t.host = spec.ps.variables == PsVariables::kGpu ? platform.gpu(node, 0) : platform.cpu(node, 0);
    t.memory_Bps = spec.ps_memory_Bps[k];
    t.memory = sg4::Mutex::create();
    t.receiver = sg4::Mutex::create();
  }
  if (spec.ps.receive_Bps < 0.0 || spec.ps.receive_large_Bps < 0.0)
    throw std::invalid_argument("job '" + spec.name + "': the gRPC receive rates must be >= 0");
  for (int g = 0; g < static_cast<int>(shard.size()); ++g) {
    ps[shard[g]].grads.push_back(g);
    ps[shard[g]].bytes += spec.program.gradients[g].bytes;
  }
  const int total = spec.warmup + spec.iterations;
  ps_fwd.assign(ranks, std::vector<double>(total, 0.0));
  for (int r = 0; r < ranks; ++r) {
    ps_started.push_back(std::make_unique<Gate>(1));
    ps_pulled.push_back(std::make_unique<Gate>(tasks));
    ps_worker_receiver.push_back(sg4::Mutex::create());
  }
  for (int k = 0; k < tasks; ++k) {
    ps_pushed.push_back(std::make_unique<Gate>(ranks));
    ps_updated.push_back(std::make_unique<Gate>(1));
  }
  for (int i = 0; i < ranks * tasks; ++i) {
    const bool local = gpu_host[i / tasks] == ps[i % tasks].host;
    ps_push_box.push_back(sg4::Mailbox::by_name(spec.name + "/psp" + std::to_string(i)));
    ps_pull_box.push_back(sg4::Mailbox::by_name(spec.name + "/psl" + std::to_string(i)));
    ps_push_local.push_back(local ? sg4::Semaphore::create(0) : nullptr);
    ps_pull_local.push_back(local ? sg4::Semaphore::create(0) : nullptr);
  }
}

void Job::State::spawn_ps_actors() {
  const int tasks = spec.ps.tasks;
  for (int r = 0; r < ranks; ++r)
    for (int k = 0; k < tasks; ++k) {
      const std::string pair = "/ps" + std::to_string(k) + "/w" + std::to_string(r);
      sg4::Actor::create(spec.name + pair, gpu_host[r], [this, r, k] { ps_worker_main(r, k); });
      sg4::Actor::create(spec.name + pair + "/server", ps[k].host,
                         [this, r, k] { ps_server_main(r, k); });
    }
  if (spec.ps.mode == PsMode::kSync)
    for (int k = 0; k < tasks; ++k)
      sg4::Actor::create(spec.name + "/ps" + std::to_string(k), ps[k].host,
                         [this, k] { ps_update_main(k); });
}

void Job::State::ps_worker_main(int rank, int task) {
  const PsTask& t = ps[task];
  const int pair = rank * spec.ps.tasks + task;
  const bool traced_rank = traced[rank / gpus] != 0;
  // gRPC goes through TCP even to a task on the worker's own node (loopback).
  const double cap = stream_cap(platform_node[rank], t.node, true);
  const LinkClass cls =
      platform_node[rank] != t.node ? LinkClass::kInterNode : LinkClass::kHostDevice;
  const int total = spec.warmup + spec.iterations;
  for (int it = 0; it < total; ++it) {
    ps_started[rank]->wait(it);
    const double t_fwd = ps_fwd[rank][it];
    const std::vector<double>& ready = schedule_of(rank).gradient_ready_s;
    for (int g : t.grads) {
      const double at = t_fwd + stretch[rank] * ready[g];
      if (at > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(at);
      const double bytes = spec.program.gradients[g].bytes;
      const double t0 = sg4::Engine::get_clock();
      if (ps_push_local[pair])
        ps_push_local[pair]->release();
      else
        send_capped(ps_push_box[pair], bytes, cap);
      recorder.add_bytes(cls, bytes);
      if (traced_rank)
        recorder.add({rank, Stream::kComm, it, t0, sg4::Engine::get_clock(),
                      "ps.push." + spec.program.gradients[g].name, "", bytes});
    }
    // The worker waits for the task's variables from here (blocked on the pull).
    const double t0 = sg4::Engine::get_clock();
    if (ps_pull_local[pair])
      ps_pull_local[pair]->acquire();
    else
      ps_pull_box[pair]->get<int>();
    ps_receive(ps_worker_receiver[rank], t.bytes);
    recorder.add_bytes(cls, t.bytes);
    if (traced_rank)
      recorder.add({rank, Stream::kComm, it, t0, sg4::Engine::get_clock(),
                    "ps.pull.task" + std::to_string(task), "", t.bytes});
    ps_pulled[rank]->arrive(it);
  }
}

void Job::State::ps_server_main(int rank, int task) {
  PsTask& t = ps[task];
  const int pair = rank * spec.ps.tasks + task;
  const double cap = stream_cap(platform_node[rank], t.node, true);
  const int total = spec.warmup + spec.iterations;
  for (int it = 0; it < total; ++it) {
    for (int g : t.grads) {
      if (ps_push_local[pair])
        ps_push_local[pair]->acquire();
      else
        ps_push_box[pair]->get<int>();
      ps_receive(t.receiver, spec.program.gradients[g].bytes);
      // Synchronous: added into the task's accumulator; asynchronous: applied to the variable.
      std::unique_lock lock(*t.memory);
      sg4::this_actor::sleep_for(kUpdateTrafficPerByte * spec.program.gradients[g].bytes /
                                 t.memory_Bps);
    }
    if (spec.ps.mode == PsMode::kSync) {
      ps_pushed[task]->arrive(it);
      ps_updated[task]->wait(it);
    }
    if (ps_pull_local[pair])
      ps_pull_local[pair]->release();
    else
      send_capped(ps_pull_box[pair], t.bytes, cap);
  }
}

void Job::State::ps_receive(const sg4::MutexPtr& thread, double bytes) {
  const double s = ps_receive_s(bytes, 1, spec.ps.receive_Bps, spec.ps.receive_large_Bps);
  if (s <= 0.0) return;
  std::unique_lock lock(*thread);
  sg4::this_actor::sleep_for(s);
}

void Job::State::ps_update_main(int task) {
  PsTask& t = ps[task];
  const int total = spec.warmup + spec.iterations;
  for (int it = 0; it < total; ++it) {
    ps_pushed[task]->wait(it);
    {
      // The averaged gradient applied to the variables once per step.
      std::unique_lock lock(*t.memory);
      sg4::this_actor::sleep_for(kUpdateTrafficPerByte * t.bytes / t.memory_Bps);
    }
    ps_updated[task]->arrive(it);
  }
}

int Job::State::ps_exchange(int rank, int iteration, double t_fwd) {
  ps_fwd[rank][iteration] = t_fwd;
  ps_started[rank]->arrive(iteration);
  ps_pulled[rank]->wait(iteration);
  return static_cast<int>(spec.program.gradients.size());
}

}  // namespace scalecast::sim
