#pragma once
// A process group of an LLM job as the network sees it: the GPU hosts of its members in group
// order, and the collective algorithms that run on it. Every algorithm is a set of SimGrid flows
// on the real routes between the members' hosts (so NVLink inside a node, NICs and the fabric
// between nodes, shared max-min with everything else that runs), at wave fidelity: one flow per
// ring edge per call carrying the call's bytes for that edge, then the latency of the remaining
// ring steps, (steps - 1) x the slowest edge's route latency (sim/README.md, "Fidelities").
// Calls are asynchronous: start() returns a handle whose wait() blocks the calling actor.

#include <simgrid/s4u.hpp>

#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "calibration/collective_model.hpp"
#include "models/llm_step.hpp"

namespace scalecast::sim {

// A group with several members on each of several nodes runs one ring per channel, as NCCL
// does: channel c visits each node's members rotated by c, so each channel leaves a node from a
// different GPU (and so through that GPU's NIC where every GPU has its own) and carries 1/c of
// the bytes. NCCL builds its rings per channel so that they enter and leave a node through
// different NICs and the inter-node traffic of a node is spread over all of them (NCCL
// src/graph/search.cc, rings per channel; docs: "NCCL_MIN_NCHANNELS"); without this a DP ring of
// 4 GPUs per DGX crosses each node through one NIC of 8. A group on one node, or with one member
// per node, has one channel (its ring is the same whatever the rotation).
class Communicator {
 public:
  explicit Communicator(std::vector<simgrid::s4u::Host*> hosts);
  // `node_of[i]`: the job node of member i. Members of one node must be contiguous and every
  // node must hold the same number of them for channels to be used; otherwise one ring.
  // `socket_factor`: the bytes factor of a flow between two nodes (NCCL over its socket
  // transport, sim/transport.hpp: 1 / kNcclSocketLinkFraction); 1 over RDMA.
  // Members all on one node (3 to kMaxRingSearchGpus of them) whose GPUs are joined by direct
  // links run on the rings of sim/intra_rings.hpp instead (each cycle of direct links and its
  // reverse, an equal share each), `link_unit_Bps` being one NVLink brick (0: unknown).
  Communicator(std::vector<simgrid::s4u::Host*> hosts, const std::vector<int>& node_of,
               double socket_factor = 1.0, double link_unit_Bps = 0.0);
  int size() const { return static_cast<int>(hosts_.size()); }
  simgrid::s4u::Host* host(int i) const { return hosts_[static_cast<std::size_t>(i)]; }
  int channels() const { return static_cast<int>(rings_.size()); }
  // Member order of channel c's ring.
  const std::vector<int>& ring(int c) const { return rings_[static_cast<std::size_t>(c)]; }
  // The slowest route latency between ring neighbours of any channel.
  double ring_alpha_s() const { return ring_alpha_s_; }
  // Every link on a route between ring neighbours of any channel.
  const std::set<const simgrid::s4u::Link*>& ring_links() const { return ring_links_; }
  // NCCL's tuning model of this group (its nodes and members per node; none: the rings' flows
  // and route latencies only). With it an all-reduce takes NCCL's algorithm and protocol for
  // its size, a reduce-scatter or all-gather NCCL's ring protocol: the flows carry the bytes
  // over the protocol's efficiency, the call waits NCCL's latency where it exceeds the routes',
  // and an all-reduce on one NVLS node moves NVLS's bytes when NCCL picks NVLS
  // (Collective::start).
  void set_nccl(const calibration::NcclTopology& topology);
  const calibration::CollectiveModel* nccl() const { return nccl_.get(); }
  // The bytes factor of the flow from member a to member b (socket_factor between nodes).
  double flow_factor(int a, int b) const {
    return node_of_.empty() ||
                   node_of_[static_cast<std::size_t>(a)] == node_of_[static_cast<std::size_t>(b)]
               ? 1.0
               : socket_factor_;
  }

 private:
  void measure();
  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<std::vector<int>> rings_;
  std::vector<int> node_of_;  // empty: one node
  double socket_factor_ = 1.0;
  std::shared_ptr<const calibration::CollectiveModel> nccl_;
  double ring_alpha_s_ = 0.0;
  std::set<const simgrid::s4u::Link*> ring_links_;
};

// One started collective: its flows and the latency that follows them.
class CollectiveCall {
 public:
  CollectiveCall() = default;
  CollectiveCall(std::vector<simgrid::s4u::CommPtr> comms, double tail_s)
      : comms_(std::move(comms)), tail_s_(tail_s) {}
  // A call without flows that ends at `end_s` (a duration measured on an earlier, identical
  // call on links nothing else uses).
  static CollectiveCall ending_at(double end_s) {
    CollectiveCall c;
    c.end_s_ = end_s;
    return c;
  }
  // Blocks until the flows are done and the tail latency after the last of them has passed.
  void wait();
  // After wait(): when the call ended (its last flow's end plus the tail latency).
  double done_at_s() const { return done_at_s_; }

 private:
  std::vector<simgrid::s4u::CommPtr> comms_;
  double tail_s_ = 0.0;
  double end_s_ = 0.0;
  double done_at_s_ = 0.0;
};

// A collective algorithm on a communicator. `bytes` is the call's buffer per member as NCCL
// counts it (all-reduce: the buffer; reduce-scatter: the input, all-gather: the output, both
// the full buffer; send-recv: what each member passes on per step); `wire_factor` scales the
// bytes on the wire (a protocol's efficiency).
class Collective {
 public:
  virtual ~Collective() = default;
  virtual const char* name() const = 0;
  // Bytes each member sends over the whole call.
  virtual double bytes_sent_per_member(int n, double bytes, int steps) const = 0;
  virtual int ring_steps(int n, int steps) const = 0;
  // The NCCL collective this is, for the communicator's tuning model (none: send-recv).
  virtual std::optional<calibration::NcclRingCollective> nccl_kind() const { return {}; }
  CollectiveCall start(const Communicator& comm, double bytes, int steps = 1,
                       double wire_factor = 1.0) const;
};

class RingAllReduce final : public Collective {  // reduce-scatter + all-gather: 2(n-1) steps
 public:
  const char* name() const override { return "ring_allreduce"; }
  double bytes_sent_per_member(int n, double b, int) const override {
    return 2.0 * (n - 1) / n * b;
  }
  int ring_steps(int n, int) const override { return 2 * (n - 1); }
  std::optional<calibration::NcclRingCollective> nccl_kind() const override {
    return calibration::NcclRingCollective::kAllReduce;
  }
};

class RingReduceScatter final : public Collective {  // n - 1 steps of b / n
 public:
  const char* name() const override { return "ring_reduce_scatter"; }
  double bytes_sent_per_member(int n, double b, int) const override {
    return static_cast<double>(n - 1) / n * b;
  }
  int ring_steps(int n, int) const override { return n - 1; }
  std::optional<calibration::NcclRingCollective> nccl_kind() const override {
    return calibration::NcclRingCollective::kReduceScatter;
  }
};

class RingAllGather final : public Collective {  // n - 1 steps of b / n
 public:
  const char* name() const override { return "ring_all_gather"; }
  double bytes_sent_per_member(int n, double b, int) const override {
    return static_cast<double>(n - 1) / n * b;
  }
  int ring_steps(int n, int) const override { return n - 1; }
  std::optional<calibration::NcclRingCollective> nccl_kind() const override {
    return calibration::NcclRingCollective::kAllGather;
  }
};

// Ring exchange (context parallelism's K/V passing): `steps` rounds, each member sending `b` to
// the next.
class RingExchange final : public Collective {
 public:
  const char* name() const override { return "ring_exchange"; }
  double bytes_sent_per_member(int, double b, int steps) const override { return b * steps; }
  int ring_steps(int, int steps) const override { return steps; }
};

// The ring algorithm that runs an LLM step's communication of kind `k`.
const Collective& collective_for(models::CommKind k);

}  // namespace scalecast::sim
