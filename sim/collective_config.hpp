#pragma once
// How gradients are all-reduced: which algorithm (NCCL-style ring, tree, or hierarchical:
// intra-node reduce-scatter over NVLink, inter-node ring or tree per local rank over the rails,
// intra-node all-gather), how tensors are fused into buckets (Horovod fusion threshold and
// cycle time, or static DDP-style buckets when the cycle time is zero), and at which fidelity
// the network is simulated: `flow` makes every step of every rank a SimGrid communication,
// `wave` makes each phase one flow per ring/tree edge carrying the phase's bytes plus the
// analytic latency of its remaining steps. With a collective model (calibration/
// collective_model.hpp; the scenario runner gives one), `auto` and the NCCL algorithm names mean
// what NCCL's tuner would run: each bucket's algorithm and protocol, its latency and the
// protocol's efficiency come from the model, the flows still go over the real routes.

#include <optional>
#include <string>
#include <string_view>

#include "calibration/collective_algorithms.hpp"
#include "sim/transport.hpp"

namespace scalecast::sim {

// ring/tree/hierarchical are flow patterns (and, with a collective model, ring and tree are
// NCCL's); nvls, nvls_tree, collnet_direct, collnet_chain are NCCL algorithms that need the
// collective model; auto = NCCL's choice per bucket (with the model) or the pattern rule below.
enum class Algorithm {
  kRing,
  kTree,
  kHierarchical,
  kAuto,
  kNvls,
  kNvlsTree,
  kCollNetDirect,
  kCollNetChain
};
enum class Fidelity { kFlow, kWave, kAuto };
// nccl and mpi run on the GPUs (mpi: CUDA-aware MPI, simulated with the same patterns);
// mpi_cpu is Horovod's MPI path without CUDA-aware MPI: each bucket is copied to host memory,
// all-reduced by MPI between the ranks' CPU sockets with the reduction on the CPU, and copied
// back (job_cpu_allreduce.cpp).
enum class Library { kNccl, kMpi, kMpiCpu };
// How gradients are grouped into buckets (sim/bucket_plan.hpp): Horovod-style fusion up to the
// buffer, PyTorch DDP buckets (close at the cap, small first bucket), TensorFlow packs.
enum class Bucketing { kFusion, kDdp, kPacks };

std::string_view to_string(Algorithm a);
std::string_view to_string(Fidelity f);
std::string_view to_string(Library l);
std::string_view to_string(Bucketing b);
std::optional<Algorithm> parse_algorithm(std::string_view text);
std::optional<Fidelity> parse_fidelity(std::string_view text);
std::optional<Library> parse_library(std::string_view text);
std::optional<Bucketing> parse_bucketing(std::string_view text);

struct AllReduceConfig {
  Library library = Library::kNccl;
  // NCCL's tuning model (calibration/collective_model.hpp) prices each bucket: algorithm,
  // protocol and latency per NCCL, and measured all-reduces of the scenario's databases. On by
  // default (`allreduce.tuner: none` turns it off): the tree pattern is NCCL's double binary
  // tree (sim/double_binary_tree.hpp), so NCCL's choices run at NCCL's bandwidths.
  bool nccl_tuner = true;
  Algorithm algorithm = Algorithm::kAuto;
  double fusion_bytes = 64.0 * 1024 * 1024;  // bucket size limit; 0 = one bucket per tensor
  double cycle_time_s = 0.0;  // Horovod cycle; 0 = static buckets launched when ready (DDP)
  // Where the coordinator's ticks fall against a step's start, as a fraction of the cycle: tick
  // k of iteration i at t_fwd + (phase + k) x cycle. Horovod's background thread ticks on its own
  // clock from hvd.init() (RunLoopOnce sleeps to last_cycle_start + cycle time), so over a run
  // every phase occurs; unset = stratified: measured iteration m of n at phase (m + 0.5) / n, so
  // the mean over the measured iterations is the mean over the phases (sim/README.md "Horovod's
  // cycle phase"). A fixed phase in [0, 1) replays one alignment.
  std::optional<double> cycle_phase;
  int chunks = 0;  // pipelining chunks per tree; 0 = NCCL's 512 KiB pieces (job_collectives)
  // Inter-node stage of the hierarchical algorithm: ring or tree.
  Algorithm inter_node = Algorithm::kRing;
  // Bucketing rule; with kDdp `fusion_bytes` is the bucket cap and `first_bucket_bytes` the
  // first bucket's (0: the cap); with kPacks the gradient is cut into `packs` equal packs.
  Bucketing bucketing = Bucketing::kFusion;
  double first_bucket_bytes = 0.0;
  int packs = 1;
  // All gradients are handed to the all-reduce only once the backward pass has produced the
  // last one (MXNet's grouped Horovod all-reduce with one group; always so for packs).
  bool after_backward = false;
  // NCCL's kernels hold one SM per channel while they run, and the compute they overlap runs on
  // the SMs left (sim/README.md "Collectives hold SMs"); `allreduce.sm_contention: false` gives
  // the compute every SM, as if the collective cost none.
  bool sm_contention = true;
  // NCCL's CollNet (SHARP in-network reduction; NVLS across nodes rides on it too): NCCL runs
  // it only with NCCL_COLLNET_ENABLE=1 (unset by default; NCCL v2.21.5-1 src/init.cc), and only
  // where the fabric has SHARP (`network.sharp`). `allreduce.collnet: true`, or forcing a
  // CollNet algorithm, sets it.
  bool collnet = false;
  // NCCL protocol (LL, LL128, Simple); empty = NCCL's choice. Needs the collective model.
  std::optional<calibration::NcclProto> protocol;
  // Transport of the job's gradient traffic between processes (all-reduce flows across nodes,
  // MPI's host-to-host steps, parameter-server pushes and pulls): the platform's native one or
  // TCP (sim/transport.hpp).
  Transport transport = Transport::kNative;
};

// The NCCL algorithm an explicit choice stands for (ring, tree, nvls, ...; hierarchical runs
// NCCL rings per stage); empty for auto.
std::optional<calibration::NcclAlgo> nccl_algo_of(Algorithm a);
bool needs_collective_model(Algorithm a);
// Whether NCCL may run CollNet for this configuration: `collnet`, or a CollNet algorithm forced.
bool collnet_enabled(const AllReduceConfig& c);

// `auto` resolved: hierarchical when there are several nodes with several GPUs, else ring.
Algorithm resolve_algorithm(Algorithm a, int nodes, int gpus_per_node);
// The pattern a data-parallel job's ranks run: with NCCL's model choosing per bucket
// (`per_bucket`), hierarchical on several nodes whatever the bucket's algorithm, else ring;
// without it, resolve_algorithm().
Algorithm job_pattern(Algorithm a, bool per_bucket, int nodes, int gpus_per_node);
// How much more an NCCL ring all-reduce moves through each node's NICs than the job pattern's
// inter-node stage (a ring of `nodes` nodes per local rank): NCCL's ring runs over all `ranks`
// GPUs, and each of its hops carries 2(ranks-1)/ranks of the buffer, against 2(nodes-1)/nodes.
// So ((ranks-1)/ranks) / ((nodes-1)/nodes): 1.25 for 4 nodes of 4 GPUs, 1 for one GPU per node.
// Needs nodes > 1 and ranks >= nodes (std::invalid_argument otherwise).
double flat_ring_inter_node_volume(int nodes, int ranks);
// What one GPU's NVLinks carry in an NVLS (NVLink SHARP) all-reduce on `gpus` GPUs of one
// NVSwitch, per byte a ring's reduce-scatter and all-gather carry there. NVLS reduces in the
// switch: the GPU's copy of every shard goes up once and the reduced own shard comes down
// (multimem ld_reduce), then the GPU multicasts that shard and every other shard comes down
// (multimem st): at least (g+1)/g of the buffer each way, against the ring's 2(g-1)/g (NCCL
// v2.21.5 src/device/all_reduce.h, the NVLS scatter / reduce-broadcast / gather warps). What NCCL
// reaches of that bound is measured: on one DGX H100, 480 GB/s bus bandwidth with NVLS and
// 365-370 with the ring [nccl#1455], 0.84 of the bound's 14/9 over the ring (the switch's
// reduction rate and NCCL's copies through its NVLS buffers), so the bound is divided by it.
// 0.77 on 8 GPUs (ring x 1.31); about 1 on 4. Needs gpus >= 3 (NCCL enables NVLS from 3 GPUs;
// std::invalid_argument otherwise).
double nvls_intra_volume(int gpus);
// `auto` resolved by size: flow up to `flow_limit_gpus` GPUs, wave beyond.
Fidelity resolve_fidelity(Fidelity f, int gpus, int flow_limit_gpus = 48);

// Communications one all-reduce posts at flow fidelity on `nodes` nodes of `gpus` GPUs: one per
// ring step and rank, so ring G x 2(G - 1) for G GPUs, hierarchical G x 2(g - 1) inside the
// nodes plus G x 2(N - 1) between them (every GPU's inter-node ring); 0 for the tree, whose count
// depends on its chunking. What a flow run costs grows with it (about 14 us per communication on
// a 2-core machine, bench/README.md).
double flow_communications_per_allreduce(Algorithm resolved, int nodes, int gpus);

// Above this many communications per all-reduce a flow run takes tens of seconds or more per
// call (wave answers in seconds), which `scalecast run` says before it starts.
inline constexpr double kFlowWarnCommunications = 2e6;

// The warning for a point of `nodes` nodes of `gpus_per_node` GPUs whose fidelity (`fidelity`,
// `auto` resolved with `flow_limit_gpus`) is flow and whose all-reduce (`algorithm` as the
// scenario gives it) posts more than kFlowWarnCommunications; "" otherwise.
std::string flow_cost_warning(Fidelity fidelity, int flow_limit_gpus, Algorithm algorithm,
                              int nodes, int gpus_per_node);

}  // namespace scalecast::sim
