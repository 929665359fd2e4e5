#pragma once
// An LLM training job with pipeline, tensor, context and data parallelism replayed on a
// simulated platform. Each pipeline stage is one actor that runs its rank's schedule
// (sim/pipeline_schedule.hpp) task by task: it waits for the task's input from the neighbouring
// stage (a real flow between the two stages' GPUs, sent as soon as the producer finished), runs
// the task's segments (compute as a delay: a GPU's compute stream is private; TP and CP
// collectives as flows among the group's GPUs), and sends its output on. A second actor per
// stage is the data-parallel communication stream: gradient reduce(-scatter)s launched as each
// chunk's last backward ends (or after the whole backward without overlap) and parameter
// all-gathers, as ring flows among the stage's DP replicas on the real routes.
//
// Symmetry: the DP replicas of a stage, and the TP and CP ranks of a group, run the same program
// at the same time, so one GPU per stage is simulated (rank tp 0, cp 0, dp 0); its TP and CP
// collectives are flows among its group's real GPUs, and its DP collectives are flows among the
// real GPUs of its DP replicas, so the inter-node links carry them. The DP rings of the other TP
// and CP ranks are the same on their own GPUs and rails and are not simulated; the simulated
// ring carries `dp_flow_factor` times its bytes to stand for the TP ranks that share its NIC.
//
// All stages end an iteration together (the loss and gradient-norm reductions synchronise them).
//
// Variability (compute noise, stragglers; sim/variability.hpp) breaks the DP symmetry: then every
// DP replica's pipeline is simulated, one actor per (replica, stage) on the replica's GPU of TP
// rank 0 and CP rank 0, with its own p2p flows, and a stage's DP collective starts when every
// replica has launched it (its ring waits for the slowest). The TP and CP ranks of a (replica,
// stage) still share one actor: their collectives after every segment make the group wait for
// its slowest member, so the actor's compute is stretched by the largest factor among the group's
// ranks in that iteration. The trace shows replica 0; the breakdown is the mean over replicas.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "calibration/collective_algorithms.hpp"
#include "models/llm_step.hpp"
#include "models/parallel_config.hpp"
#include "sim/variability.hpp"

namespace scalecast::sim {

class SimulatedPlatform;

// One segment of a micro-batch's pass through a chunk, priced: its ops' total time on the
// stage's GPU, then its communications.
struct PricedSegment {
  double compute_s = 0.0;
  std::vector<models::LlmComm> comms;
};

struct PricedChunk {
  std::vector<PricedSegment> forward, backward;  // one micro-batch
  double send_forward_bytes = 0.0;               // to the next chunk
  double send_backward_bytes = 0.0;              // to the previous chunk
  std::vector<models::LlmComm> dp_comms;         // per iteration
  double optimizer_s = 0.0;                      // this chunk's optimizer step
};

struct PipelineJobSpec {
  std::string name = "llm";
  models::ParallelConfig parallel;  // sizes, schedule, ZeRO stage and overlap switches
  std::vector<PricedChunk> chunks;  // pp * virtual_stages, by global chunk index
  std::vector<int> nodes;           // platform node indices of the job, in rank order
  int gpus_per_node = 1;            // ranks per node (rank r on nodes[r / gpus_per_node])
  int warmup = 1;
  int iterations = 1;
  double dp_flow_factor = 1.0;  // bytes factor of the simulated DP ring (NIC sharing)
  // Bytes factor of every flow between two nodes: 1 / kNcclSocketLinkFraction when NCCL runs over
  // its socket transport (the platform's NICs without RDMA, sim/transport.hpp); 1 over RDMA.
  double socket_factor = 1.0;
  Variability variability;  // none: one replica stands for all (above)
  // Replay a TP/CP collective that fills its node as the duration its first identical call took
  // (pipeline_job.cpp, `private_tp_cp`); false: every call as flows.
  bool memoize_private = true;
  // NCCL's view of a group spanning `nodes` nodes with up to `per_node` members on one
  // (calibration::nccl_topology); empty: the groups run the rings' flows and route latencies
  // only (Communicator::set_nccl).
  std::function<calibration::NcclTopology(int nodes, int per_node)> nccl_topology;
  std::function<void(int, int)> on_iteration;  // (done, total) on stage 0, progress only
};

// Where one stage's time went, per iteration (mean over the measured iterations); the terms
// add up to the iteration time.
struct StageBreakdown {
  double compute_s = 0.0;    // forward and backward (recomputation included)
  double optimizer_s = 0.0;  // the optimizer step
  double bubble_s = 0.0;     // waiting for work that no stage has sent yet, and at the end
  double exposed_tp_s = 0.0, exposed_cp_s = 0.0, exposed_pp_s = 0.0, exposed_dp_s = 0.0;
  double total() const {
    return compute_s + optimizer_s + bubble_s + exposed_tp_s + exposed_cp_s + exposed_pp_s +
           exposed_dp_s;
  }
};

// One activity of a simulated stage, for the trace: track "compute", "tp", "cp", "pp_wait",
// "dp".
struct StageInterval {
  int stage = 0;
  std::string track;
  int iteration = 0;
  double start_s = 0.0, end_s = 0.0;
  std::string name;
};

struct PipelineResult {
  std::string name;
  int gpus = 0, microbatches = 0;
  int replicas_simulated = 1;  // DP replicas with their own actors (all of them with variability)
  int stragglers = 0;          // ranks drawn as persistent stragglers
  double iteration_time_s = 0.0;  // mean over the measured iterations
  std::vector<double> iteration_times_s;
  std::vector<StageBreakdown> stages;  // per pipeline rank (mean over the simulated replicas)
  // Bytes per iteration by process group over all GPUs ("tp", "cp", "pp", "dp").
  std::map<std::string, double> bytes_per_iteration;
  std::vector<StageInterval> intervals;  // measured iterations only
};

class PipelineJob {
 public:
  // Creates the stage actors on the platform's GPU hosts; run the engine afterwards. Throws
  // std::invalid_argument for a spec whose sizes disagree (chunks, nodes, GPUs).
  PipelineJob(const SimulatedPlatform& platform, PipelineJobSpec spec);
  ~PipelineJob();
  PipelineJob(const PipelineJob&) = delete;
  PipelineJob& operator=(const PipelineJob&) = delete;

  PipelineResult result() const;  // valid after the engine has run

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace scalecast::sim
