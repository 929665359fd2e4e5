#include "sim/communicator.hpp"

#include <algorithm>
#include <cstdint>

#include "sim/collective_config.hpp"
#include "sim/comm_wait.hpp"
#include "sim/host_rings.hpp"
#include "sim/intra_rings.hpp"

namespace sg4 = simgrid::s4u;

namespace scalecast::sim {

Communicator::Communicator(std::vector<sg4::Host*> hosts) : hosts_(std::move(hosts)) {
  std::vector<int> order(hosts_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  rings_.push_back(std::move(order));
  measure();
}

Communicator::Communicator(std::vector<sg4::Host*> hosts, const std::vector<int>& node_of,
                           double socket_factor, double link_unit_Bps)
    : hosts_(std::move(hosts)), node_of_(node_of), socket_factor_(socket_factor) {
  const int n = size();
  // Blocks of contiguous members on one node.
  std::vector<std::pair<int, int>> blocks;  // first member, count
  bool contiguous = static_cast<int>(node_of.size()) == n;
  for (int i = 0; contiguous && i < n; ++i) {
    if (i == 0 || node_of[static_cast<std::size_t>(i)] != node_of[static_cast<std::size_t>(i - 1)])
      blocks.emplace_back(i, 0);
    ++blocks.back().second;
  }
  std::vector<int> seen;
  for (const auto& b : blocks) {
    const int node = node_of[static_cast<std::size_t>(b.first)];
    if (std::find(seen.begin(), seen.end(), node) != seen.end()) contiguous = false;
    seen.push_back(node);
  }
  const int per_node = blocks.empty() ? 0 : blocks.front().second;
  for (const auto& b : blocks) contiguous = contiguous && b.second == per_node;
  const int channels = contiguous && blocks.size() > 1 ? per_node : 1;
  if (contiguous && blocks.size() == 1 && n >= 3 && n <= kMaxRingSearchGpus) {
    // One node: the rings of its direct GPU links (a route of one link), as the DP job's.
    rings_ = rings_over_hosts(hosts_, link_unit_Bps);
    measure();
    return;
  }
  for (int c = 0; c < channels; ++c) {
    std::vector<int> order;
    order.reserve(static_cast<std::size_t>(n));
    if (channels == 1) {
      for (int i = 0; i < n; ++i) order.push_back(i);
    } else {
      for (const auto& b : blocks)
        for (int k = 0; k < per_node; ++k) order.push_back(b.first + (k + c) % per_node);
    }
    rings_.push_back(std::move(order));
  }
  measure();
}

void Communicator::set_nccl(const calibration::NcclTopology& topology) {
  nccl_ = std::make_shared<const calibration::CollectiveModel>(topology);
}

void Communicator::measure() {
  const int n = size();
  std::vector<sg4::Link*> links;
  for (const std::vector<int>& r : rings_) {
    for (int i = 0; i < n && n > 1; ++i) {
      links.clear();
      double latency = 0.0;
      host(r[static_cast<std::size_t>(i)])
          ->route_to(host(r[static_cast<std::size_t>((i + 1) % n)]), links, &latency);
      ring_alpha_s_ = std::max(ring_alpha_s_, latency);
      ring_links_.insert(links.begin(), links.end());
    }
  }
}

void CollectiveCall::wait() {
  wait_all_started(comms_);
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
  const int channels = comm.channels();
  // NCCL's terms for the call: its protocol's wire bytes and the latency beyond the routes'.
  double extra_latency_s = 0.0;
  if (const calibration::CollectiveModel* m = comm.nccl(); m && nccl_kind()) {
    const calibration::NcclTopology& t = m->topology();
    double latency_s = 0.0;
    if (*nccl_kind() == calibration::NcclRingCollective::kAllReduce) {
      // NCCL's pick among its all-reduce algorithms, with its protocol and latency: across many
      // nodes the tree's log-depth latency, not the ring's 2 x nodes network steps. The flows
      // stay the group's rings (the tree moves about as many bytes per GPU), except NVLS on one
      // node, which moves its own (nvls_intra_volume).
      const calibration::CollectiveChoice c = m->choose(bytes);
      wire_factor /= c.efficiency;
      if (c.algo == calibration::NcclAlgo::kNvls && t.nodes == 1 && n >= 3)
        wire_factor *= nvls_intra_volume(n);
      latency_s = c.latency_s;
    } else {
      const calibration::NcclRingChoice c = calibration::nccl_ring_choice(t, *nccl_kind(), bytes);
      wire_factor /= c.efficiency;
      latency_s = c.latency_s;
    }
    extra_latency_s = std::max(0.0, latency_s - ring_steps(n, steps) * comm.ring_alpha_s());
  }
  const double per_edge = bytes_sent_per_member(n, bytes, steps) * wire_factor / channels;
  std::vector<sg4::CommPtr> comms;
  comms.reserve(static_cast<std::size_t>(n * channels));
  for (int c = 0; c < channels; ++c) {
    const std::vector<int>& r = comm.ring(c);
    for (int i = 0; i < n; ++i) {
      const int from = r[static_cast<std::size_t>(i)];
      const int to = r[static_cast<std::size_t>((i + 1) % n)];
      comms.push_back(sg4::Comm::sendto_async(
          comm.host(from), comm.host(to),
          static_cast<std::uint64_t>(per_edge * comm.flow_factor(from, to))));
    }
  }
  return {std::move(comms), (ring_steps(n, steps) - 1) * comm.ring_alpha_s() + extra_latency_s};
}

const Collective& collective_for(models::CommKind k) {
  static const RingAllReduce all_reduce;
  static const RingReduceScatter reduce_scatter;
  static const RingAllGather all_gather;
  static const RingExchange exchange;
  switch (k) {
    case models::CommKind::kAllReduce:
      return all_reduce;
    case models::CommKind::kReduceScatter:
      return reduce_scatter;
    case models::CommKind::kAllGather:
      return all_gather;
    case models::CommKind::kSendRecv:
      return exchange;
  }
  return all_reduce;
}

}  // namespace scalecast::sim
