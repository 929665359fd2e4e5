#pragma once
// A GPU's compute stream while collective kernels hold some of its SMs. NCCL runs each channel
// of a collective as one thread block, resident on one SM from the kernel's launch to its end,
// waiting for peers included (NCCL src/enqueue.cc, ncclLaunchKernel: one block per channel)
// [NCCL-enqueue];
// a convolution or GEMM that fills the GPU then runs on the SMs left. While a collective holds a
// share s of the SMs the compute that overlaps it progresses at 1 - s of its rate
// (sim/README.md "Collectives hold SMs"). SimGrid-free.

#include <vector>

namespace scalecast::sim {

class ComputeClock {
 public:
  // Compute starts at wall time `start_s`; forgets earlier contention.
  void start(double start_s);
  // Collective kernels held `share` (0..1) of the SMs over wall [t0_s, t1_s]. Intervals come in
  // time order and do not overlap (one communication stream per rank); an empty or zero-share
  // interval is ignored. Throws std::invalid_argument for a share outside [0, 1], an interval
  // ending before it starts, or one starting before the previous one ended.
  void contend(double t0_s, double t1_s, double share);
  // Wall time at which `work_s` seconds of compute (at the full rate, after the start) are done.
  double wall_at(double work_s) const;
  // Compute time lost to contention by the time `work_s` of compute is done: wall_at - start -
  // work_s.
  double lost_s(double work_s) const { return wall_at(work_s) - start_s_ - work_s; }

 private:
  struct Held {
    double t0, t1, share;
  };
  double start_s_ = 0.0;
  std::vector<Held> held_;
};

}  // namespace scalecast::sim
