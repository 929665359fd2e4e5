#include "kernels/cpu_affinity.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace scalecast::kernels {
namespace {

void set_cpus(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0)
    throw std::runtime_error(std::string("sched_setaffinity: ") + std::strerror(errno));
}

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    throw std::runtime_error(std::string("sched_getaffinity: ") + std::strerror(errno));
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

int current_cpu() {
  const int cpu = sched_getcpu();
  if (cpu < 0) throw std::runtime_error(std::string("sched_getcpu: ") + std::strerror(errno));
  return cpu;
}

CpuPin::CpuPin(int cpu) : saved_(allowed_cpus()) {
  if (std::find(saved_.begin(), saved_.end(), cpu) == saved_.end())
    throw std::invalid_argument("CPU " + std::to_string(cpu) +
                                " is not one this thread may run on");
  set_cpus({cpu});
}

CpuPin::~CpuPin() {
  try {
    set_cpus(saved_);
  } catch (const std::exception&) {
    // A destructor must not throw; the thread then stays pinned, which is only slower.
  }
}

}  // namespace scalecast::kernels
