#pragma once
// Internal to job*.cpp: the shared state of one job's rank actors (hosts, mailboxes, the
// coordinator's bucket plan, the symmetry gates, route figures for the wave latency terms).

#include <simgrid/s4u.hpp>

#include <array>
#include <limits>
#include <memory>
#include <vector>

#include "sim/bucket_plan.hpp"
#include "sim/compute_clock.hpp"
#include "sim/job.hpp"

namespace scalecast::sim {

// Mailbox channels: a rank receives each kind of phase on its own mailbox, so a fast neighbour's
// next-phase message never matches a receive of the current phase.
// kTreeUp/kTreeDown carry the double binary tree's first tree, kTreeUpB/kTreeDownB its second.
enum Channel {
  kIntra = 0,
  kInter = 1,
  kFlat = 2,
  kTreeUp = 3,
  kTreeDown = 4,
  kTreeUpB = 5,
  kTreeDownB = 6,
  kChannelCount = 7
};
// Flow fidelity sends each tree piece as its own communication: at most this many per tree.
inline constexpr double kMaxFlowTreeChunks = 64;
// Wave fidelity posts one flow per tree edge up to this many tree members, beyond it one flow
// per member to the next carrying the same bytes (job_collectives.cpp, tree_all_reduce).
inline constexpr int kMaxTreeEdgeMembers = 16;

// Opened epoch by epoch once `need` representative ranks arrived; others wait for the epoch.
class Gate {
 public:
  explicit Gate(int need);
  void arrive(int epoch);
  void wait(int epoch);

 private:
  int need_;
  int opened_ = 0;
  std::vector<int> arrivals_;
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr cv_;
};

// Route figures of one phase's edges: the worst latency and the narrowest bottleneck.
struct EdgeStats {
  double alpha_max_s = 0.0;
  double bandwidth_min = 0.0;  // bytes/s
};

// How one bucket is all-reduced under the collective model: the inter-node stage's pattern, the
// bytes the flows carry per buffer byte (1 / protocol efficiency) and the latency NCCL's model
// adds beyond the routes' own.
enum class InterStage { kRing, kTree, kSharp };
struct BucketPlan {
  InterStage inter = InterStage::kRing;
  double wire_factor = 1.0;        // flat patterns and the intra-node stages
  double inter_wire_factor = 1.0;  // the inter-node stage
  double extra_latency_s = 0.0;
  // The SMs the call's kernels hold on each GPU while it runs: one per NCCL channel (0 when not
  // simulated: no NCCL model, or allreduce.sm_contention false); hold_sms takes their share of
  // the rank's GPU's SMs. Horovod's hierarchical calls: sm_blocks the node's reduce-scatter and
  // all-gather, inter_sm_blocks the all-reduce across nodes; one NCCL call: both the same.
  int sm_blocks = 0;
  int inter_sm_blocks = 0;
};

struct Job::State {
  JobSpec spec;
  const calibration::CollectiveModel* model = nullptr;  // spec.collectives
  bool per_bucket = false;  // auto / NCCL-only algorithm: the inter stage follows each choice
  std::map<std::string, double> choice_counts;  // rank 0's buckets by "algo/proto"
  bool any_measured = false;
  int nodes = 0, gpus = 0, ranks = 0;
  Algorithm algorithm = Algorithm::kRing;
  Fidelity fidelity = Fidelity::kWave;
  // NCCL over TCP (library nccl, transport tcp): a collective's flow between two nodes carries
  // its bytes x this factor, 1 / spec.tcp.nccl_link_fraction, so it holds the NICs as long as
  // NCCL's socket transport takes (sim/transport.hpp); the recorder counts the payload. 1 else.
  double socket_factor = 1.0;
  // CUDA-aware MPI over TCP (library mpi, transport tcp): each message between two nodes is a TCP
  // stream moving at most spec.tcp.stream_rate_Bps() (sim/transport.hpp); infinity else.
  double mpi_stream_Bps = std::numeric_limits<double>::infinity();
  bool shortcut = false;                   // node-0 representative for intra-node phases and copies
  ComputeSchedule schedule;                // rank 0's (of spec.program)
  std::vector<ComputeSchedule> schedules;  // heterogeneous jobs: one per spec.programs entry
  bool heterogeneous = false;
  // The step program and compute schedule of this rank's GPU type.
  const StepProgram& program_of(int rank) const {
    return heterogeneous ? spec.programs[spec.node_program[rank / gpus]] : spec.program;
  }
  const ComputeSchedule& schedule_of(int rank) const {
    return heterogeneous ? schedules[spec.node_program[rank / gpus]] : schedule;
  }
  std::vector<simgrid::s4u::Host*> gpu_host, cpu_host;  // per rank
  std::vector<std::array<simgrid::s4u::Mailbox*, kChannelCount>> mailbox;
  // The directed rings of the intra-node stages and of the flat ring (sim/intra_rings.hpp): local
  // GPU orders, the same on every node; each carries an equal share of the buffer. Ring 0 runs
  // on the kIntra / kFlat channel, ring k >= 1 on ring_box[rank][k - 1].
  std::vector<std::vector<int>> rings;
  std::vector<std::vector<int>> ring_pos;                     // per ring: local GPU -> position
  std::vector<std::vector<simgrid::s4u::Mailbox*>> ring_box;  // per rank: rings 1, 2...
  void setup_rings(const SimulatedPlatform& platform);
  int intra_next(int ring, int rank) const;  // the next rank of `rank` on its node's ring
  int flat_next(int ring, int rank) const;   // the next rank on the flat ring over all nodes
  std::vector<char> traced;                  // per job-local node
  Recorder recorder;
  // Coordinator plan, per iteration; `plan_done[it]` once the last bucket is decided.
  std::vector<std::vector<Decision>> plan;
  std::vector<char> plan_done;
  simgrid::s4u::MutexPtr plan_mutex;
  simgrid::s4u::ConditionVariablePtr plan_cv;
  std::vector<Decision> static_buckets;  // cycle time 0, or DDP / packs bucketing
  // Horovod's coordinator decides the buckets at run time (fusion with a cycle time).
  bool coordinated() const {
    return spec.allreduce.cycle_time_s > 0.0 && spec.allreduce.bucketing == Bucketing::kFusion;
  }
  double last_tick = -1.0;  // coordinator's last Horovod cycle tick
  std::unique_ptr<Gate> intra_gate, copy_gate;
  EdgeStats intra, inter, flat, tree_flat, tree_inter;
  // Rail mode (symmetric wave, hierarchical, several nodes): node 0 has rank actors, every node
  // one rail actor per NIC group for the inter-node stage.
  bool rail_mode = false;
  std::vector<std::vector<int>> groups;        // local GPUs per NIC group
  std::vector<simgrid::s4u::Host*> rail_host;  // per rail actor: node * groups + group
  std::vector<std::array<simgrid::s4u::Mailbox*, kChannelCount>> rail_mailbox;
  std::vector<double> epoch_bytes;      // bucket bytes per epoch; negative: stop
  std::vector<InterStage> epoch_inter;  // the inter-node stage of each epoch
  std::vector<int> bucket_epoch;        // per rank: epochs it has passed
  std::vector<double> stretch;          // per rank: this iteration's compute-time factor
  // Per rank: this iteration's compute stream, slowed while its collectives hold SMs
  // (compute_clock.hpp); compute offsets (already stretched) map to wall times through it.
  std::vector<ComputeClock> clock;
  double compute_lost_s = 0.0;  // rank 0's, summed over the measured iterations
  // Whether this rank's collectives can hold SMs: NCCL's model, contention on, the GPU's SM
  // count known, and GPU collectives (not MPI on the CPU, not parameter servers).
  bool sm_contention_possible(int rank) const {
    return model && spec.allreduce.sm_contention && program_of(rank).gpu_sms > 0 && !cpu_mpi() &&
           !ps_mode();
  }
  std::unique_ptr<Gate> rs_gate, inter_gate;

  // Input pipeline (job_input.cpp), when spec.input.staged(): per rank with its own pipeline,
  // batches through each stage and batches consumed by compute.
  enum InputStage { kReadStage = 0, kDecodeStage = 1, kCopyStage = 2 };
  struct Pipe {
    int done[3] = {0, 0, 0};
    int consumed = 0;
    simgrid::s4u::MutexPtr mutex;
    simgrid::s4u::ConditionVariablePtr cv;
  };
  std::vector<Pipe> pipe;                      // per rank (node 0 only with the shortcut)
  std::vector<simgrid::s4u::Disk*> nvme_disk;  // per job-local node
  struct PfsRequest {
    simgrid::s4u::Mailbox* to;
    double bytes;
  };
  struct PfsServer {
    simgrid::s4u::Host* host = nullptr;
    simgrid::s4u::Disk* disk = nullptr;
    std::vector<PfsRequest> queue;
    simgrid::s4u::MutexPtr mutex;
    simgrid::s4u::ConditionVariablePtr cv;
  };
  std::vector<PfsServer> pfs;
  // PFS reads: one reader per (node, CPU host) reads the batches of that socket's ranks as one
  // flow (the node's file-system client); under the shortcut, nodes >= 1 have mirror readers
  // that read when node 0's do, so the file system carries every node's load.
  struct PfsReader {
    simgrid::s4u::Host* host;
    std::vector<int> ranks;
    simgrid::s4u::Mailbox* box;
    bool mirror;
  };
  std::vector<PfsReader> readers;
  std::unique_ptr<Gate> read_gate, batch_gate;
  bool has_pipe(int rank) const { return !pipe.empty() && (!shortcut || rank < gpus); }
  void setup_input(const SimulatedPlatform& platform);
  void input_stage(int rank, InputStage stage);
  void pfs_reader_main(int reader);
  void pfs_server_main(int server);
  // Blocks until batch `iteration` is on the GPU; records the stall since `t_iter`.
  double wait_batch(int rank, int iteration, double t_iter);
  void release_batch(int rank, int iteration);
  // Waits until `rank`'s pipeline may start reading `batch`, or the stage before `stage` is done.
  void wait_stage_input(int rank, InputStage stage, int batch);
  void stage_done(int rank, InputStage stage, int batch);

  // Host-memory gradient exchange: parameter servers (job_parameter_server.cpp) and MPI on the
  // CPU (job_cpu_allreduce.cpp).
  bool ps_mode() const { return spec.ps.tasks > 0; }
  bool cpu_mpi() const { return !ps_mode() && spec.allreduce.library == Library::kMpiCpu; }
  struct PsTask {
    simgrid::s4u::Host* host = nullptr;
    int node = 0;  // platform node
    double bytes = 0.0;
    std::vector<int> grads;  // gradient indices, ready order
    double memory_Bps = 0.0;
    simgrid::s4u::MutexPtr memory;  // one update at a time
    // The task process's gRPC polling thread: one received push at a time (kTfGrpcReceiveBps).
    simgrid::s4u::MutexPtr receiver;
  };
  std::vector<PsTask> ps;
  std::vector<std::vector<double>> ps_fwd;  // per rank and iteration: forward start
  std::vector<std::unique_ptr<Gate>> ps_started, ps_pulled;  // per rank
  std::vector<std::unique_ptr<Gate>> ps_pushed, ps_updated;  // per task
  std::vector<simgrid::s4u::MutexPtr> ps_worker_receiver;    // per rank: its gRPC thread
  // Holds the process's gRPC thread while it takes `bytes` out of gRPC (ps.receive_Bps).
  void ps_receive(const simgrid::s4u::MutexPtr& thread, double bytes);
  // Per (rank, task) pair, index rank * tasks + task: pushes go to the task's side, pulls back.
  // A pair on one host (a worker on the GPU that holds the task's variables) moves nothing over
  // a route: its messages are handed over in memory (semaphores; SimGrid has no route from a
  // host to itself).
  std::vector<simgrid::s4u::Mailbox*> ps_push_box, ps_pull_box;
  std::vector<simgrid::s4u::SemaphorePtr> ps_push_local, ps_pull_local;
  void setup_ps(const SimulatedPlatform& platform);
  void spawn_ps_actors();
  void ps_worker_main(int rank, int task);  // the worker's end of the pair, on its GPU
  void ps_server_main(int rank, int task);  // the task's end of the pair, on the task's host
  void ps_update_main(int task);
  // Hands the iteration to the rank's push/pull actors and waits for its pulls; returns the
  // pushes made.
  int ps_exchange(int rank, int iteration, double t_fwd);
  std::vector<int> platform_node;  // per rank
  double stream_cap(int node_a, int node_b, bool loopback_tcp) const;
  // A flow between two hosts (no rate cap: SimGrid 3.32 ignores rates of host-to-host comms).
  static void host_flow(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes);
  // A message of `bytes` to `to`'s receiver, at most `rate` bytes/s (infinity: no cap).
  static void send_capped(simgrid::s4u::Mailbox* to, double bytes, double rate);
  // MPI on the CPU: one proxy actor per rank on its CPU socket (the MPI process's host side)
  // runs the ring; the rank hands it each bucket and waits (gates per rank, epoch = bucket).
  // per rank: the lesser of its share of the socket's memory bandwidth and one core's
  std::vector<double> cpu_reduce_Bps;
  std::vector<simgrid::s4u::Mailbox*> cpu_box;  // per rank: ring chunks from the previous rank
  std::vector<simgrid::s4u::SemaphorePtr> cpu_local;  // per rank: the same, from its own socket
  std::vector<std::vector<double>> cpu_buckets;       // per rank: bucket bytes by epoch; < 0: stop
  std::vector<std::vector<char>> cpu_fused;           // per rank and epoch: several tensors
  std::vector<std::unique_ptr<Gate>> cpu_handed, cpu_reduced;  // per rank
  std::vector<int> cpu_epoch;                                  // per rank: buckets handed
  void setup_cpu_mpi();
  void spawn_cpu_actors();
  void cpu_proxy_main(int rank);
  // `fused`: the bucket holds several tensors, copied into and out of Horovod's fusion buffer.
  void cpu_all_reduce(int rank, double bytes, bool fused);

  State(const SimulatedPlatform& platform, JobSpec s);
  void rank_main(int rank);
  double draw_stretch(int rank, int iteration) const;
  void rail_main(int rail);
  // Collectives (job_collectives.cpp), called by rank `rank` with the bucket's bytes.
  void all_reduce(int rank, double bytes, int& intra_epoch);
  // `blocks` of the rank's GPU's SMs were held from t0_s to now: the rank's compute clock
  // runs slower over it (a no-op without contention or without the GPU's SM count).
  void hold_sms(int rank, double t0_s, int blocks);
  BucketPlan plan_bucket(double bytes) const;
  void record_choice(double bytes);
  double pattern_alpha_s(InterStage inter) const;
  // The inter-node stage among n members, member i being box i * stride + offset.
  // `streams`: how many ranks' streams each of its flows stands for (the rail actors' groups).
  void inter_stage(std::vector<std::array<simgrid::s4u::Mailbox*, kChannelCount>>& boxes, int n,
                   int stride, int offset, int pos, double bytes, InterStage stage, int streams);
  void measure_edges();
  // Pipeline pieces of one tree of `tree_bytes` (spec.allreduce.chunks, or NCCL's chunk size).
  int tree_chunks(double tree_bytes) const;
  void setup_rails();
  void pipelined_hierarchical(int rank, double shard, double inter_bytes, InterStage stage,
                              int& intra_epoch);
  // Rail mode: hands this bucket's inter-node stage to the rail actors (rank 0 records its bytes
  // and stage); returns the bucket's epoch, whose inter_gate opens when the rails are done.
  int hand_to_rails(int rank, double inter_bytes, InterStage stage);

 private:
  int sync_gradients(int rank, int iteration, double t_fwd, int& intra_epoch);
  bool next_decision(int rank, int iteration, double t_fwd, int k, Decision& out);
  void decide(int iteration, double t_fwd, int k, double& tick_state);
  // The Horovod cycle's phase in `iteration` (warm-up included), a fraction of the cycle.
  double cycle_phase(int iteration) const;
  void copy_input(int rank, int iteration);
  // `steps` transfers of step_bytes to `to` and from `from`; each flow carries step_bytes x
  // flow_factor (socket_factor between nodes), the recorder step_bytes x multiplicity; `rate`
  // caps each flow (MPI's TCP streams between nodes), infinity for none.
  void ring_phase(simgrid::s4u::Mailbox* to, simgrid::s4u::Mailbox* from, int steps,
                  double step_bytes, const EdgeStats& edges, LinkClass cls, double multiplicity,
                  double flow_factor = 1.0, double rate = std::numeric_limits<double>::infinity());
  // One hop of each directed ring: where this rank sends and receives, what the hop is.
  struct RingHop {
    simgrid::s4u::Mailbox* to = nullptr;
    simgrid::s4u::Mailbox* from = nullptr;
    LinkClass cls = LinkClass::kIntraNode;
    double flow_factor = 1.0;
    double rate = std::numeric_limits<double>::infinity();
  };
  // ring_phase over several rings at once, each carrying step_bytes / hops.size() per step
  // (exactly ring_phase with one ring).
  void rings_phase(const std::vector<RingHop>& hops, int steps, double step_bytes,
                   const EdgeStats& edges, double multiplicity);
  // Tree over `members` (indices into `boxes`); this participant is members[pos].
  // `members_are_ranks`: members are ranks (the flat tree), so an edge crosses nodes only between
  // two nodes' ranks; otherwise every edge is between nodes (the inter-node stage).
  void tree_all_reduce(std::vector<std::array<simgrid::s4u::Mailbox*, kChannelCount>>& boxes,
                       const std::vector<int>& members, int pos, double bytes,
                       const EdgeStats& edges, LinkClass cls, bool members_are_ranks, int streams);
  void rail_stage(int epoch, double bytes);
  void intra_phase(int rank, int steps, double step_bytes, int& intra_epoch);
};

}  // namespace scalecast::sim
