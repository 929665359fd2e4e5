// The staged input pipeline of a job (sim/input_pipeline.hpp): per rank, a read, a decode and a
// copy actor on the rank's CPU host, each working through the batches in order, the first stage
// at most `prefetch_depth` batches ahead of the batch compute is on. Storage reads are real
// SimGrid activities: NVMe reads on the node's disk (shared by the node's ranks), PFS reads on a
// storage server's disk plus a flow from the server to the rank's CPU over the platform's route.

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <mutex>
#include <stdexcept>

#include "sim/job_state.hpp"
#include "sim/simulated_platform.hpp"

namespace sg4 = simgrid::s4u;

namespace scalecast::sim {

namespace {

char kPayload = 0;  // PFS data messages carry no real data

}  // namespace

void Job::State::setup_input(const SimulatedPlatform& platform) {
  const InputPipelineSpec& in = spec.input;
  if (in.prefetch_depth < 0) throw std::invalid_argument("prefetch depth must be >= 0");
  if (in.source != InputSource::kMemory && !(in.stored_bytes_per_sample > 0.0))
    throw std::invalid_argument("a storage source needs the stored bytes per sample");
  if (in.decode_samples_per_s > 0.0 && !(in.decode_cores > 0.0))
    throw std::invalid_argument("decode needs a positive number of cores");
  // Ranks with their own pipeline: node 0 only under the shortcut (the others mirror it).
  const int piped = shortcut ? gpus : ranks;
  pipe.resize(piped);
  for (int r = 0; r < piped; ++r) {
    pipe[r].mutex = sg4::Mutex::create();
    pipe[r].cv = sg4::ConditionVariable::create();
    if (in.source == InputSource::kPfs)
      pipe[r].box = sg4::Mailbox::by_name(spec.name + "/input/" + std::to_string(r));
  }
  batch_gate = std::make_unique<Gate>(gpus);
  if (in.source == InputSource::kNvme) {
    for (int n = 0; n < (shortcut ? 1 : nodes); ++n) {
      sg4::Disk* d = platform.nvme(spec.nodes[n]);
      if (d == nullptr)
        throw std::invalid_argument("input source nvme: node " + std::to_string(spec.nodes[n]) +
                                    " of the platform has no NVMe disk");
      nvme_disk.push_back(d);
    }
  }
  if (in.source == InputSource::kPfs) {
    const std::vector<sg4::Host*> servers = platform.pfs_servers();
    if (servers.empty())
      throw std::invalid_argument("input source pfs: the platform has no parallel file system");
    pfs.resize(servers.size());
    for (std::size_t k = 0; k < servers.size(); ++k) {
      if (servers[k]->get_disks().empty())
        throw std::invalid_argument("PFS server " + servers[k]->get_name() + " has no disk");
      pfs[k].host = servers[k];
      pfs[k].disk = servers[k]->get_disks().front();
      pfs[k].mutex = sg4::Mutex::create();
      pfs[k].cv = sg4::ConditionVariable::create();
    }
    if (shortcut) {
      // Every other node reads what node 0 reads at the same time, so the file system and the
      // fabric carry all nodes' reads: one reader per node and CPU host (a rank's data lands on
      // its socket's CPU, as node 0's do), issuing one flow per rank.
      read_gate = std::make_unique<Gate>(gpus);
      for (int n = 1; n < nodes; ++n) {
        const std::size_t first = mirrors.size();
        for (int g = 0; g < gpus; ++g) {
          const int r = n * gpus + g;
          auto it = std::find_if(mirrors.begin() + first, mirrors.end(),
                                 [&](const Mirror& m) { return m.host == cpu_host[r]; });
          if (it == mirrors.end()) {
            mirrors.push_back({cpu_host[r], {}, nullptr});
            it = mirrors.end() - 1;
          }
          it->ranks.push_back(r);
        }
      }
      for (std::size_t m = 0; m < mirrors.size(); ++m)
        mirrors[m].box = sg4::Mailbox::by_name(spec.name + "/input/m" + std::to_string(m));
    }
  }
}

void Job::State::storage_read(const std::vector<int>& readers, int batch, sg4::Mailbox* box) {
  const double bytes = spec.program.batch_per_gpu * spec.input.stored_bytes_per_sample;
  const auto size = static_cast<sg_size_t>(bytes);
  std::vector<sg4::IoPtr> ios;
  if (spec.input.source == InputSource::kNvme) {
    for (int r : readers) ios.push_back(nvme_disk[r / gpus]->read_async(size));
  } else {
    // The server of rank r for batch b rotates, (r + b) mod servers, so the ranks spread evenly
    // over the (aggregated) servers, as striped files do. The disk read and the network flow run
    // at the same time (a server streams), so the read takes the longer of the two.
    std::vector<sg4::CommPtr> comms;
    std::vector<char*> payloads(readers.size(), nullptr);
    for (std::size_t i = 0; i < readers.size(); ++i) {
      PfsServer& server = pfs[(readers[i] + batch) % pfs.size()];
      ios.push_back(server.disk->read_async(size));
      {
        std::unique_lock lock(*server.mutex);
        server.queue.push_back({box, bytes});
        server.cv->notify_all();
      }
      comms.push_back(box->get_async<char>(&payloads[i]));
    }
    sg4::Comm::wait_all(comms);
  }
  for (const sg4::IoPtr& io : ios) io->wait();
}

void Job::State::pfs_server_main(int k) {
  sg4::Actor::self()->daemonize();  // serves until the job's other actors are done
  PfsServer& server = pfs[k];
  for (;;) {
    std::vector<PfsRequest> work;
    {
      std::unique_lock lock(*server.mutex);
      while (server.queue.empty()) server.cv->wait(lock);
      work.swap(server.queue);
    }
    for (const PfsRequest& req : work)
      req.to->put_init(&kPayload, static_cast<std::uint64_t>(req.bytes))->detach();
  }
}

void Job::State::mirror_main(int m) {
  const Mirror& mirror = mirrors[m];
  const int total = spec.warmup + spec.iterations;
  for (int b = 0; b < total; ++b) {
    read_gate->wait(b);
    storage_read(mirror.ranks, b, mirror.box);
  }
}

void Job::State::input_stage(int rank, InputStage stage) {
  const InputPipelineSpec& in = spec.input;
  const bool has[3] = {in.source != InputSource::kMemory, in.decode_samples_per_s > 0.0, true};
  int prev = -1;  // the stage feeding this one
  for (int s = 0; s < stage; ++s)
    if (has[s]) prev = s;
  Pipe& p = pipe[rank];
  const int node = rank / gpus;
  const int total = spec.warmup + spec.iterations;
  const int batch = spec.program.batch_per_gpu;
  for (int b = 0; b < total; ++b) {
    {
      std::unique_lock lock(*p.mutex);
      if (prev < 0) {
        // The first stage may start batch b once compute has finished iteration b - 1 - depth.
        while (p.consumed < b - in.prefetch_depth) p.cv->wait(lock);
      } else {
        while (p.done[prev] <= b) p.cv->wait(lock);
      }
    }
    const double t0 = sg4::Engine::get_clock();
    double bytes = 0.0;
    Stream track = Stream::kCopy;
    const char* name = "h2d_input";
    if (stage == kReadStage) {
      if (read_gate) read_gate->arrive(b);
      storage_read({rank}, b, p.box);
      bytes = batch * in.stored_bytes_per_sample;
      recorder.add_bytes(LinkClass::kStorage, bytes, shortcut ? nodes : 1);
      track = Stream::kRead;
      name = "read";
    } else if (stage == kDecodeStage) {
      // The rank's decode cores are its own (one loader per rank, pinned), so decoding is a
      // delay, not a share of the socket: batch / (rate x cores).
      sg4::this_actor::sleep_for(in.decode_s(batch));
      track = Stream::kDecode;
      name = "decode";
    } else if (spec.program.input_bytes > 0.0) {
      sg4::Comm::sendto_init(cpu_host[rank], gpu_host[rank])
          ->set_payload_size(static_cast<std::uint64_t>(spec.program.input_bytes))
          ->start()
          ->wait();
      bytes = spec.program.input_bytes;
      recorder.add_bytes(LinkClass::kHostDevice, bytes, shortcut ? nodes : 1);
    }
    if (traced[node] && (stage != kCopyStage || bytes > 0.0))
      recorder.add({rank, track, b, t0, sg4::Engine::get_clock(), name, "", bytes});
    std::unique_lock lock(*p.mutex);
    p.done[stage] = b + 1;
    p.cv->notify_all();
  }
}

double Job::State::wait_batch(int rank, int iteration, double t_iter) {
  const int node = rank / gpus;
  if (has_pipe(rank)) {
    Pipe& p = pipe[rank];
    std::unique_lock lock(*p.mutex);
    while (p.done[kCopyStage] <= iteration) p.cv->wait(lock);
  } else {
    batch_gate->wait(iteration);  // a mirror image of node 0
  }
  const double now = sg4::Engine::get_clock();
  if (now > t_iter && traced[node]) recorder.add_stall(rank, t_iter, now);
  if (shortcut && node == 0) batch_gate->arrive(iteration);
  return now;
}

void Job::State::release_batch(int rank, int iteration) {
  if (!has_pipe(rank)) return;
  Pipe& p = pipe[rank];
  std::unique_lock lock(*p.mutex);
  p.consumed = iteration + 1;
  p.cv->notify_all();
}

}  // namespace scalecast::sim
