#include "sim/multi_job.hpp"

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "common/units.hpp"
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

  // Training job k: the data-parallel jobs first, then the pipeline jobs.
  std::size_t training_count() const { return specs.size() + pipeline_specs.size(); }
  bool is_dp(std::size_t k) const { return k < specs.size(); }
  const std::string& name_of(std::size_t k) const {
    return is_dp(k) ? specs[k].spec.name : pipeline_specs[k - specs.size()].spec.name;
  }
  const std::vector<int>& nodes_of(std::size_t k) const {
    return is_dp(k) ? specs[k].spec.nodes : pipeline_specs[k - specs.size()].spec.nodes;
  }
  double start_of(std::size_t k) const {
    return is_dp(k) ? specs[k].start_s : pipeline_specs[k - specs.size()].start_s;
  }
  void create(std::size_t k) {
    if (is_dp(k)) {
      jobs[k] = std::make_unique<Job>(platform, specs[k].spec);
    } else {
      pipelines[k - specs.size()] =
          std::make_unique<PipelineJob>(platform, pipeline_specs[k - specs.size()].spec);
    }
  }

  void launch(std::size_t k) {
    sg4::this_actor::sleep_until(start_of(k));
    try {
      create(k);
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
    // With a duration the job asks for rate x duration at once: request i is due at start +
    // i x request / rate. Without one it asks for rate x the time elapsed, the window ending when
    // the training jobs do: request i is due once that covers it, at start + (i + 1) x request /
    // rate, so the job never reads more than it asked whenever the window ends (a 1 B/s job read
    // a 16 MiB request at its start). A late request goes at once.
    const bool open_ended = spec.duration_s <= 0.0;
    // This node's share of kMaxIoRequests (the load checked the windows it knows).
    const long most = (spec.max_requests + static_cast<long>(spec.nodes.size()) - 1) /
                      static_cast<long>(spec.nodes.size());
    for (long i = 0;; ++i) {
      const double due = spec.start_s + static_cast<double>(open_ended ? i + 1 : i) *
                                            spec.request_bytes / per_node_Bps;
      // No more than the volume asked for: whole requests within rate x duration (so none is due
      // at or after the window's end).
      if (spec.duration_s > 0.0 &&
          static_cast<double>(i + 1) * spec.request_bytes > per_node_Bps * spec.duration_s)
        break;
      if (due > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(due);
      if (sg4::Engine::get_clock() >= stop_s) break;
      if (i >= most) {
        error = std::make_exception_ptr(common::ConfigError(
            spec.file, spec.line, spec.column, spec.key,
            fmt::format("the I/O job '{}' reached {} requests of {} at {:.6g} s, before the "
                        "training jobs ended; that is the most scalecast simulates per I/O job "
                        "(give it a duration, a larger request_size or a lower read_rate)",
                        spec.name,
                        common::format_count(most * static_cast<long>(spec.nodes.size())),
                        common::format_quantity(spec.request_bytes, common::Quantity::kSize),
                        sg4::Engine::get_clock())));
        sg4::Actor::kill_all();
        return;
      }
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
  for (std::size_t k = 0; k < s->training_count(); ++k) names.push_back(s->name_of(k));
  for (const IoJobSpec& j : s->io) names.push_back(j.name);
  for (std::size_t a = 0; a < names.size(); ++a)
    for (std::size_t b = a + 1; b < names.size(); ++b)
      if (names[a] == names[b])
        throw std::invalid_argument("two jobs are named '" + names[a] + "'; names must differ");
  for (std::size_t k = 0; k < s->training_count(); ++k) {
    const std::string& name = s->name_of(k);
    const double start = s->start_of(k);
    if (!(start >= 0.0) || !std::isfinite(start))
      throw std::invalid_argument("job '" + name + "': start time " + std::to_string(start) +
                                  " s; expected a finite time >= 0");
    if (s->nodes_of(k).empty()) throw std::invalid_argument("job '" + name + "' has no nodes");
    if (start == 0.0) {
      s->create(k);
    } else {
      sg4::Actor::create(name + "/launch", platform.gpu(s->nodes_of(k).front(), 0),
                         [s, k] { s->launch(k); });
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

namespace {

// Every job's result, once run() has created them all (a late job is created at its start).
template <class Job>
auto results_of(const std::vector<std::unique_ptr<Job>>& jobs, const char* what) {
  std::vector<decltype(jobs.front()->result())> out;
  for (const auto& j : jobs) {
    if (!j)
      throw std::logic_error(std::string("JobMix::") + what + " before run() started every job");
    out.push_back(j->result());
  }
  return out;
}

}  // namespace

std::vector<JobResult> JobMix::results() const { return results_of(state_->jobs, "results()"); }

std::vector<PipelineResult> JobMix::pipeline_results() const {
  return results_of(state_->pipelines, "pipeline_results()");
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
