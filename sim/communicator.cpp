#include "sim/communicator.hpp"

#include <algorithm>
#include <cstdint>

namespace sg4 = simgrid::s4u;

namespace scalecast::sim {

Communicator::Communicator(std::vector<sg4::Host*> hosts) : hosts_(std::move(hosts)) {
  const int n = size();
  std::vector<sg4::Link*> links;
  for (int i = 0; i < n && n > 1; ++i) {
    links.clear();
    double latency = 0.0;
    hosts_[static_cast<std::size_t>(i)]->route_to(hosts_[static_cast<std::size_t>((i + 1) % n)],
                                                  links, &latency);
    ring_alpha_s_ = std::max(ring_alpha_s_, latency);
  }
}

void CollectiveCall::wait() {
  if (!comms_.empty()) sg4::Comm::wait_all(comms_);
  // The tail latency follows the last flow's end, whenever the caller comes to wait.
  double last = end_s_;
  for (const sg4::CommPtr& c : comms_) last = std::max(last, c->get_finish_time());
  const double until = comms_.empty() && tail_s_ == 0.0 ? end_s_ : last + tail_s_;
  comms_.clear();
  tail_s_ = 0.0;
  done_at_s_ = until;
  const double now = sg4::Engine::get_clock();
  if (until > now) sg4::this_actor::sleep_for(until - now);
}

CollectiveCall Collective::start(const Communicator& comm, double bytes, int steps,
                                 double wire_factor) const {
  const int n = comm.size();
  if (n <= 1 || bytes <= 0.0) return {};
  const double per_edge = bytes_sent_per_member(n, bytes, steps) * wire_factor;
  std::vector<sg4::CommPtr> comms;
  comms.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    comms.push_back(sg4::Comm::sendto_async(comm.host(i), comm.host((i + 1) % n),
                                            static_cast<std::uint64_t>(per_edge)));
  return {std::move(comms), (ring_steps(n, steps) - 1) * comm.ring_alpha_s()};
}

}  // namespace scalecast::sim
