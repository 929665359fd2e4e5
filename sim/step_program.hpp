#pragma once
// The work one GPU does in one training step, as the replay engine sees it: ops with durations
// already priced by a cost model, the stream each runs on, their dependencies, and the gradient
// tensors in ready order. compute_schedule() list-schedules the ops on their streams (a CUDA
// stream runs its ops in order) and gives every op's start/end offset from the iteration start
// and the time each gradient becomes ready; the optimizer ops are scheduled separately because
// they wait for the last all-reduce.

#include <cstddef>
#include <string>
#include <vector>

namespace scalecast::sim {

// The GPU's three streams, then two host-side tracks of the input pipeline (storage read, CPU
// decode) that the recorder and the trace keep apart from the GPU streams.
enum class Stream { kCompute = 0, kComm = 1, kCopy = 2, kRead = 3, kDecode = 4 };
inline constexpr int kStreamCount = 3;  // GPU streams (compute, comm, copy)
inline constexpr int kTrackCount = 5;   // GPU streams + input-pipeline tracks
const char* to_string(Stream s);

struct ProgramOp {
  std::string name;
  Stream stream = Stream::kCompute;
  double duration_s = 0.0;
  std::string tier;                // cost-model tier that priced it ("exact", "datasheet", ...)
  std::vector<std::size_t> preds;  // indices of ops this one waits for (all earlier in `ops`)
  bool optimizer = false;          // runs after the gradients are all-reduced
};

struct ProgramGradient {
  std::string name;
  double bytes = 0.0;
  std::size_t ready_after = 0;  // index of the op that produces it
};

struct StepProgram {
  std::vector<ProgramOp> ops;              // topological order
  std::vector<ProgramGradient> gradients;  // ready order
  int batch_per_gpu = 1;                   // samples per GPU per step
  double input_bytes = 0.0;                // host-to-device copy of one step's batch
  // Fixed host costs (calibration/fixed_costs.hpp), never scaled by the framework efficiency:
  // a GPU op cannot start before the host has issued it, `dispatch_per_op_s` per op in program
  // order after the host's start, and the host starts `fixed_per_iteration_s` after the
  // iteration does (synchronisation, data hand-off), which delays the first op by as much.
  double dispatch_per_op_s = 0.0;
  double fixed_per_iteration_s = 0.0;
  // Compute ops priced faster than the GPU's peak for their dtype (a convolution: twice it, as
  // Winograd and FFT kernels beat the direct-convolution FLOP count), which only a framework
  // efficiency above 1 does; the largest such rate over the peak. Reported, never clamped.
  int above_peak_ops = 0;
  double above_peak_max_ratio = 0.0;
  // Streaming multiprocessors of the GPU it runs on (platforms::GpuSpec::sms); 0: unknown, and
  // then no collective slows its compute (sim/README.md "Collectives hold SMs").
  int gpu_sms = 0;
};

// Offsets from the iteration start (the moment the first forward op may run).
struct ComputeSchedule {
  std::vector<double> op_start_s, op_end_s;  // per op; optimizer ops relative to optimizer start
  std::vector<double> gradient_ready_s;      // per gradient
  double backward_end_s = 0.0;               // when all non-optimizer ops are done
  double optimizer_s = 0.0;                  // duration of the optimizer ops (from their start)
  double compute_busy_s = 0.0;               // sum of non-optimizer compute-stream op time
  double fixed_s = 0.0;  // the program's fixed_per_iteration_s, at the start of the iteration
};

// Throws std::invalid_argument for a predecessor that is not an earlier op, a gradient that
// names a missing op, or a negative fixed cost.
ComputeSchedule compute_schedule(const StepProgram& program);

// Gradient accumulation: one iteration runs `micro_batches` forward and backward passes one after
// the other, then one gradient exchange and one optimizer step. The first K - 1 passes carry no
// gradient traffic, so they are one compute-stream op of K - 1 times the pass's scheduled length
// (its ops, streams and host dispatch, without the iteration's fixed host time); the program's
// own ops follow as the last pass and produce the gradients (so buckets overlap its backward
// pass, as DDP's no_sync and Horovod's backward_passes_per_step do; `allreduce.after_backward`
// holds them to its end, as a post-accumulation all-reduce does), then the optimizer. Batch and
// input bytes per iteration grow by the factor. Memory and work stay those of one pass plus one
// op, whatever K. 1 returns the program unchanged; below 1 throws std::invalid_argument.
StepProgram accumulate_micro_batches(const StepProgram& program, int micro_batches);
// The tier of that op: no cost-model tier of its own (it repeats the program's ops), so tier
// accounting (JobResult::op_tiers) leaves it out.
inline constexpr const char* kAccumulationTier = "accumulation";

// Total time of all ops (all streams), the "communication free" iteration time when every op
// is on the compute stream.
double total_op_time_s(const StepProgram& program);

}  // namespace scalecast::sim
