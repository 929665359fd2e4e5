#pragma once
// Which CPUs a measuring thread runs on. The cores of a VM (and the big and little cores of a
// hybrid CPU) run the same kernel at different speeds: two vCPUs of one test machine were up to
// 30% apart (validation/README.md), so a CPU calibration, and a loop compared with it, must stay
// on one core.

#include <vector>

namespace scalecast::kernels {

// The CPUs the calling thread may run on, ascending.
std::vector<int> allowed_cpus();
// The CPU the calling thread runs on now.
int current_cpu();

// Pins the calling thread, and the threads it starts while pinned (they inherit it), to one CPU;
// gives the thread its previous CPUs back when destroyed. Throws std::invalid_argument for a CPU
// the thread may not run on, std::runtime_error when the kernel refuses.
class CpuPin {
 public:
  explicit CpuPin(int cpu);
  ~CpuPin();
  CpuPin(const CpuPin&) = delete;
  CpuPin& operator=(const CpuPin&) = delete;

 private:
  std::vector<int> saved_;
};

}  // namespace scalecast::kernels
