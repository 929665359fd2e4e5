// The staged input pipeline of a job (sim/input_pipeline.hpp): per rank, a read (NVMe), a decode
// and a copy actor on the rank's CPU host, each working through the batches in order, the first
// stage at most `prefetch_depth` batches ahead of the batch compute is on; PFS reads are done by
// one reader per node and CPU socket for the socket's ranks. Storage reads are real SimGrid
// activities: NVMe reads on the node's disk (shared by the node's ranks), PFS reads on a storage
// server's disk plus a flow from the server to the socket's CPU over the platform's route.

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
    // One reader per (node, CPU host): a rank's data lands on its socket's CPU. Under the
    // shortcut every other node reads what node 0 reads at the same time (mirror readers), so
    // the file system and the fabric carry all nodes' reads.
    int node0_readers = 0;
    for (int n = 0; n < nodes; ++n) {
      const std::size_t first = readers.size();
      for (int g = 0; g < gpus; ++g) {
        const int r = n * gpus + g;
        auto it = std::find_if(readers.begin() + first, readers.end(),
                               [&](const PfsReader& x) { return x.host == cpu_host[r]; });
        if (it == readers.end()) {
          readers.push_back({cpu_host[r], {}, nullptr, shortcut && n > 0});
          it = readers.end() - 1;
          if (n == 0) ++node0_readers;
        }
        it->ranks.push_back(r);
      }
    }
    if (shortcut) read_gate = std::make_unique<Gate>(node0_readers);
    for (std::size_t k = 0; k < readers.size(); ++k)
      readers[k].box = sg4::Mailbox::by_name(spec.name + "/input/" + std::to_string(k));
  }
}

void Job::State::wait_stage_input(int rank, InputStage stage, int batch) {
  const InputPipelineSpec& in = spec.input;
  const bool has[3] = {in.source != InputSource::kMemory, in.decode_samples_per_s > 0.0, true};
  int prev = -1;  // the stage feeding this one
  for (int s = 0; s < stage; ++s)
    if (has[s]) prev = s;
  Pipe& p = pipe[rank];
  std::unique_lock lock(*p.mutex);
  if (prev < 0) {
    // The first stage may start batch b once compute has finished iteration b - 1 - depth.
    while (p.consumed < batch - in.prefetch_depth) p.cv->wait(lock);
  } else {
    while (p.done[prev] <= batch) p.cv->wait(lock);
  }
}

void Job::State::stage_done(int rank, InputStage stage, int batch) {
  Pipe& p = pipe[rank];
  std::unique_lock lock(*p.mutex);
  p.done[stage] = batch + 1;
  p.cv->notify_all();
}

void Job::State::pfs_reader_main(int k) {
  const PfsReader& reader = readers[k];
  const int total = spec.warmup + spec.iterations;
  const double bytes = spec.program.batch_per_gpu * spec.input.stored_bytes_per_sample;
  const double all_bytes = bytes * static_cast<double>(reader.ranks.size());
  const auto node = reader.ranks.front() / gpus;
  for (int b = 0; b < total; ++b) {
    if (reader.mirror) {
      read_gate->wait(b);
    } else {
      for (int r : reader.ranks) wait_stage_input(r, kReadStage, b);
      if (read_gate) read_gate->arrive(b);
    }
    const double t0 = sg4::Engine::get_clock();
    // The server of reader k for batch b rotates, (k + b) mod servers, so the readers spread
    // evenly over the (aggregated) servers, as striped files do. The disk read and the network
    // flow run at the same time (a server streams), so the read takes the longer of the two.
    PfsServer& server = pfs[(k + b) % pfs.size()];
    sg4::IoPtr io = server.disk->read_async(static_cast<sg_size_t>(all_bytes));
    {
      std::unique_lock lock(*server.mutex);
      server.queue.push_back({reader.box, all_bytes});
      server.cv->notify_all();
    }
    reader.box->get<char>();
    io->wait();
    if (reader.mirror) continue;
    recorder.add_bytes(LinkClass::kStorage, all_bytes, shortcut ? nodes : 1);
    for (int r : reader.ranks) {
      if (traced[node])
        recorder.add({r, Stream::kRead, b, t0, sg4::Engine::get_clock(), "read", "", bytes});
      stage_done(r, kReadStage, b);
    }
  }
}

void Job::State::pfs_server_main(int k) {
  sg4::Actor::self()->daemonize();  // serves until the job's other actors are done
  PfsServer& server = pfs[k];
  // Sends are kept, not detached: with detached sends a list search on every completion took 15%
  // of a full-Summit PFS run (perf, SimGrid 3.32); finished sends are dropped here instead.
  std::vector<sg4::CommPtr> sending;
  for (;;) {
    std::vector<PfsRequest> work;
    {
      std::unique_lock lock(*server.mutex);
      while (server.queue.empty()) server.cv->wait(lock);
      work.swap(server.queue);
    }
    std::erase_if(sending, [](const sg4::CommPtr& c) { return c->test(); });
    for (const PfsRequest& req : work)
      sending.push_back(req.to->put_async(&kPayload, static_cast<std::uint64_t>(req.bytes)));
  }
}

void Job::State::input_stage(int rank, InputStage stage) {
  const InputPipelineSpec& in = spec.input;
  const int node = rank / gpus;
  const int total = spec.warmup + spec.iterations;
  const int batch = spec.program.batch_per_gpu;
  for (int b = 0; b < total; ++b) {
    wait_stage_input(rank, stage, b);
    const double t0 = sg4::Engine::get_clock();
    double bytes = 0.0;
    Stream track = Stream::kCopy;
    const char* name = "h2d_input";
    if (stage == kReadStage) {  // NVMe: the node's disk, shared by its ranks' reads
      bytes = batch * in.stored_bytes_per_sample;
      nvme_disk[node]->read(static_cast<sg_size_t>(bytes));
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
    stage_done(rank, stage, b);
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
