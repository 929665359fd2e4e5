#include "sim/multi_job.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>

#include "sim/simulated_platform.hpp"

namespace sg4 = simgrid::s4u;

namespace scalecast::sim {

struct JobMix::State {
  const SimulatedPlatform& platform;
  std::vector<ScheduledJob> specs;
  std::vector<std::unique_ptr<Job>> jobs;
  std::vector<IoJobSpec> io;
  std::vector<IoJobResult> io_out;
  std::vector<ScheduledPipelineJob> pipeline_specs;
  std::vector<std::unique_ptr<PipelineJob>> pipelines;
  std::exception_ptr error;  // a late job that could not be created
  double end_s = 0.0;        // when the simulation ended

  // Creates training job k (data-parallel jobs first, then pipeline jobs) at its start time.
  void launch(std::size_t k) {
    const bool dp = k < specs.size();
    sg4::this_actor::sleep_until(dp ? specs[k].start_s : pipeline_specs[k - specs.size()].start_s);
    try {
      if (dp) {
        jobs[k] = std::make_unique<Job>(platform, specs[k].spec);
      } else {
        pipelines[k - specs.size()] =
            std::make_unique<PipelineJob>(platform, pipeline_specs[k - specs.size()].spec);
      }
    } catch (...) {
      error = std::current_exception();
      sg4::Actor::kill_all();  // nothing to learn from the rest of a broken mix
    }
  }

  void read(std::size_t j, std::size_t slot) {
    const IoJobSpec& spec = io[j];
    IoJobResult& out = io_out[j];
    const std::vector<sg4::Host*> servers = platform.pfs_servers();
    sg4::Host* const client = platform.cpu(spec.nodes[slot], 0);
    // Without a duration the neighbour reads as long as any training job runs.
    if (spec.duration_s <= 0.0) sg4::Actor::self()->daemonize();
    sg4::this_actor::sleep_until(spec.start_s);
    const double per_node_Bps = spec.read_rate_Bps / static_cast<double>(spec.nodes.size());
    const double stop_s = spec.duration_s > 0.0 ? spec.start_s + spec.duration_s : INFINITY;
    for (long i = 0;; ++i) {
      // Request i is due at start + i x request / rate; a late one goes at once.
      const double due = spec.start_s + static_cast<double>(i) * spec.request_bytes / per_node_Bps;
      if (due >= stop_s) break;
      if (due > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(due);
      if (sg4::Engine::get_clock() >= stop_s) break;
      // Servers in turn from the node's own offset, as striped files spread over them.
      sg4::Host* server = servers[(slot + static_cast<std::size_t>(i)) % servers.size()];
      const auto bytes = static_cast<std::uint64_t>(spec.request_bytes);
      sg4::IoPtr disk = server->get_disks().front()->read_async(bytes);
      sg4::CommPtr flow = sg4::Comm::sendto_init(server, client)->set_payload_size(bytes)->start();
      flow->wait();
      disk->wait();
      out.bytes_read += spec.request_bytes;
      out.end_s = std::max(out.end_s, sg4::Engine::get_clock());
    }
  }
};

JobMix::JobMix(const SimulatedPlatform& platform, std::vector<ScheduledJob> jobs,
               std::vector<IoJobSpec> io, std::vector<ScheduledPipelineJob> pipelines)
    : state_(std::make_unique<State>(
          State{platform, std::move(jobs), {}, std::move(io), {}, std::move(pipelines), {}, {}})) {
  State* s = state_.get();
  s->jobs.resize(s->specs.size());
  s->pipelines.resize(s->pipeline_specs.size());
  // Job names name their mailboxes and actors: two jobs of one name would exchange messages.
  std::vector<std::string> names;
  for (const ScheduledJob& j : s->specs) names.push_back(j.spec.name);
  for (const ScheduledPipelineJob& j : s->pipeline_specs) names.push_back(j.spec.name);
  for (const IoJobSpec& j : s->io) names.push_back(j.name);
  for (std::size_t a = 0; a < names.size(); ++a)
    for (std::size_t b = a + 1; b < names.size(); ++b)
      if (names[a] == names[b])
        throw std::invalid_argument("two jobs are named '" + names[a] + "'; names must differ");
  for (std::size_t k = 0; k < s->specs.size(); ++k) {
    const ScheduledJob& j = s->specs[k];
    if (!(j.start_s >= 0.0) || !std::isfinite(j.start_s))
      throw std::invalid_argument("job '" + j.spec.name + "': start time " +
                                  std::to_string(j.start_s) + " s; expected a finite time >= 0");
    if (j.spec.nodes.empty()) throw std::invalid_argument("job '" + j.spec.name + "' has no nodes");
    if (j.start_s == 0.0) {
      s->jobs[k] = std::make_unique<Job>(platform, j.spec);
    } else {
      sg4::Actor::create(j.spec.name + "/launch", platform.gpu(j.spec.nodes.front(), 0),
                         [s, k] { s->launch(k); });
    }
  }
  for (std::size_t k = 0; k < s->pipeline_specs.size(); ++k) {
    const ScheduledPipelineJob& j = s->pipeline_specs[k];
    if (!(j.start_s >= 0.0) || !std::isfinite(j.start_s))
      throw std::invalid_argument("job '" + j.spec.name + "': start time " +
                                  std::to_string(j.start_s) + " s; expected a finite time >= 0");
    if (j.spec.nodes.empty()) throw std::invalid_argument("job '" + j.spec.name + "' has no nodes");
    if (j.start_s == 0.0) {
      s->pipelines[k] = std::make_unique<PipelineJob>(platform, j.spec);
    } else {
      const std::size_t which = s->specs.size() + k;
      sg4::Actor::create(j.spec.name + "/launch", platform.gpu(j.spec.nodes.front(), 0),
                         [s, which] { s->launch(which); });
    }
  }
  const std::vector<sg4::Host*> servers = platform.pfs_servers();
  for (std::size_t j = 0; j < s->io.size(); ++j) {
    const IoJobSpec& spec = s->io[j];
    if (servers.empty())
      throw std::invalid_argument("I/O job '" + spec.name +
                                  "': the platform has no parallel file system to read");
    if (spec.nodes.empty() || !(spec.read_rate_Bps > 0.0) || !(spec.request_bytes >= 1.0) ||
        !(spec.start_s >= 0.0) || !(spec.duration_s >= 0.0))
      throw std::invalid_argument("I/O job '" + spec.name +
                                  "': expected nodes, a read rate > 0, a request of at least "
                                  "1 byte and start and duration >= 0");
    for (int n : spec.nodes)
      if (n < 0 || n >= platform.node_count())
        throw std::invalid_argument("I/O job '" + spec.name + "' uses node " + std::to_string(n) +
                                    " which does not exist");
    IoJobResult r;
    r.name = spec.name;
    r.nodes = static_cast<int>(spec.nodes.size());
    r.start_s = spec.start_s;
    r.end_s = spec.start_s;
    r.requested_rate_Bps = spec.read_rate_Bps;
    s->io_out.push_back(r);
    for (std::size_t slot = 0; slot < spec.nodes.size(); ++slot)
      sg4::Actor::create(spec.name + "/read" + std::to_string(slot),
                         platform.cpu(spec.nodes[slot], 0), [s, j, slot] { s->read(j, slot); });
  }
}

JobMix::~JobMix() = default;

void JobMix::run() {
  sg4::Engine::get_instance()->run();
  state_->end_s = sg4::Engine::get_clock();
  if (state_->error) std::rethrow_exception(state_->error);
}

std::vector<JobResult> JobMix::results() const {
  std::vector<JobResult> out;
  for (const auto& j : state_->jobs) {
    if (!j) throw std::logic_error("JobMix::results() before run() started every job");
    out.push_back(j->result());
  }
  return out;
}

std::vector<PipelineResult> JobMix::pipeline_results() const {
  std::vector<PipelineResult> out;
  for (const auto& j : state_->pipelines) {
    if (!j) throw std::logic_error("JobMix::pipeline_results() before run() started every job");
    out.push_back(j->result());
  }
  return out;
}

std::vector<IoJobResult> JobMix::io_results() const {
  std::vector<IoJobResult> out = state_->io_out;
  for (std::size_t j = 0; j < out.size(); ++j) {
    // Over the window the job read in: to its duration's end (or its last read, if later), or
    // to the end of the simulation (the last training job's end) when it had no duration.
    IoJobResult& r = out[j];
    const IoJobSpec& spec = state_->io[j];
    r.end_s = spec.duration_s > 0.0 ? std::max(r.end_s, spec.start_s + spec.duration_s)
                                    : std::max(r.end_s, state_->end_s);
    r.achieved_rate_Bps = r.end_s > r.start_s ? r.bytes_read / (r.end_s - r.start_s) : 0.0;
  }
  return out;
}

}  // namespace scalecast::sim
