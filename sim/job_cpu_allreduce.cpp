// MPI all-reduce on the CPU (allreduce.library: mpi_cpu), as Horovod's MPI path runs without
// CUDA-aware MPI: each fused bucket is copied from the GPU to host memory, copied into Horovod's
// fusion buffer when it holds several tensors (MPIAllreduce::Execute, MEMCPY_IN_FUSION_BUFFER /
// MEMCPY_OUT_FUSION_BUFFER [Horovod-mpi_ops]), all-reduced by MPI between the ranks' processes,
// copied out of the fusion buffer and back to the GPU. The MPI all-reduce is the ring for large
// buffers (Open MPI's tuned decision [OpenMPI-tuned]: reduce-scatter then all-gather, 2(n-1)
// steps of S/n; its 1 MB segmentation is not modelled)
// between the ranks' CPU sockets: one proxy actor per rank on its socket's host stands for the
// MPI process's host side. A step between two nodes is a message between their CPU hosts on the
// platform's route (one TCP stream with transport tcp); between two sockets of a node, over
// their link; between two processes on one socket, a shared-memory copy (read and write: 2 S/n
// bytes of memory traffic). Each reduce-scatter step adds the received chunk into the rank's
// own (read both, write one: 3 S/n bytes) at the lesser of the rank's share of its socket's
// memory bandwidth and one core's (Open MPI's reduction is single-threaded in the rank's process;
// Horovod's fusion-buffer memcpy runs on its one background thread) [Puget-HaswellSTREAM];
// a rank sends step s + 1 only after it has received and reduced step s, as the ring's data
// dependence requires.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

#include "sim/comm_wait.hpp"
#include "sim/job_state.hpp"

namespace sg4 = simgrid::s4u;

namespace scalecast::sim {
namespace {
// Memory traffic per byte: a reduction reads two operands and writes one; a copy reads and
// writes.
constexpr double kReduceTrafficPerByte = 3.0;
constexpr double kCopyTrafficPerByte = 2.0;
}  // namespace

void Job::State::setup_cpu_mpi() {
  if (!(spec.cpu_memory_Bps > 0.0))
    throw std::invalid_argument("job '" + spec.name +
                                "': allreduce library mpi_cpu reduces in host memory and needs "
                                "the CPU sockets' memory bandwidth (cpu_memory_Bps > 0)");
  std::map<sg4::Host*, int> per_socket;
  for (sg4::Host* h : cpu_host) ++per_socket[h];
  for (int r = 0; r < ranks; ++r) {
    const double share = spec.cpu_memory_Bps / per_socket[cpu_host[r]];
    cpu_reduce_Bps.push_back(spec.cpu_core_Bps > 0.0 ? std::min(share, spec.cpu_core_Bps) : share);
    cpu_box.push_back(sg4::Mailbox::by_name(spec.name + "/mpi" + std::to_string(r)));
    const int prev = (r + ranks - 1) % ranks;
    cpu_local.push_back(cpu_host[prev] == cpu_host[r] ? sg4::Semaphore::create(0) : nullptr);
    cpu_handed.push_back(std::make_unique<Gate>(1));
    cpu_reduced.push_back(std::make_unique<Gate>(1));
  }
  cpu_buckets.assign(ranks, {});
  cpu_fused.assign(ranks, {});
  cpu_epoch.assign(ranks, 0);
}

void Job::State::spawn_cpu_actors() {
  // Daemons: they serve buckets until the ranks are done.
  for (int r = 0; r < ranks; ++r)
    sg4::Actor::create(spec.name + "/mpi" + std::to_string(r), cpu_host[r], [this, r] {
      cpu_proxy_main(r);
    })->daemonize();
}

void Job::State::cpu_all_reduce(int rank, double bytes, bool fused) {
  const int epoch = cpu_epoch[rank]++;
  cpu_buckets[rank].push_back(bytes);
  cpu_fused[rank].push_back(fused ? 1 : 0);
  cpu_handed[rank]->arrive(epoch);
  cpu_reduced[rank]->wait(epoch);
}

void Job::State::cpu_proxy_main(int rank) {
  const int n = ranks;
  const int next = (rank + 1) % n;
  const bool same_socket = cpu_host[rank] == cpu_host[next];
  const bool same_node = platform_node[rank] == platform_node[next];
  const double cap = stream_cap(platform_node[rank], platform_node[next], false);
  for (int epoch = 0;; ++epoch) {
    cpu_handed[rank]->wait(epoch);
    const double bytes = cpu_buckets[rank][epoch];
    const double fusion_copy_s =
        cpu_fused[rank][epoch] ? kCopyTrafficPerByte * bytes / cpu_reduce_Bps[rank] : 0.0;
    host_flow(gpu_host[rank], cpu_host[rank], bytes);  // device to host
    recorder.add_bytes(LinkClass::kHostDevice, bytes);
    sg4::this_actor::sleep_for(fusion_copy_s);  // into the fusion buffer
    const double chunk = bytes / n;
    for (int step = 0; step < 2 * (n - 1); ++step) {
      // Send this step's chunk to the next rank while receiving the previous rank's.
      sg4::CommPtr put;
      if (same_socket) {
        sg4::this_actor::sleep_for(kCopyTrafficPerByte * chunk / cpu_reduce_Bps[rank]);
        cpu_local[next]->release();
      } else {
        put = cpu_box[next]->put_init(&cpu_box, static_cast<std::uint64_t>(chunk));
        if (std::isfinite(cap)) put->set_rate(cap);
        put->start();
      }
      if (cpu_local[rank])
        cpu_local[rank]->acquire();
      else
        cpu_box[rank]->get<void>();
      if (put) wait_started(put);
      recorder.add_bytes(same_node ? LinkClass::kIntraNode : LinkClass::kInterNode, chunk);
      if (step < n - 1)
        sg4::this_actor::sleep_for(kReduceTrafficPerByte * chunk / cpu_reduce_Bps[rank]);
    }
    sg4::this_actor::sleep_for(fusion_copy_s);         // out of the fusion buffer
    host_flow(cpu_host[rank], gpu_host[rank], bytes);  // host to device
    recorder.add_bytes(LinkClass::kHostDevice, bytes);
    cpu_reduced[rank]->arrive(epoch);
  }
}

}  // namespace scalecast::sim
