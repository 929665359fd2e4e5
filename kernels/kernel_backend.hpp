#pragma once
// One interface over the measured kernels: a backend names the device it runs on (with the
// driver and library versions that make a calibration table self-describing) and times one
// request, returning one result per algorithm-selection mode it supports (the CUDA backend
// returns cuDNN's exhaustive "find" best and the "_v7" heuristic pick; the CPU backend one
// "fixed" implementation).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_request.hpp"
#include "kernels/timing.hpp"

namespace scalecast::kernels {

struct DeviceInfo {
  std::string backend;  // "cpu" or "cuda"
  std::string name;     // e.g. "Intel(R) Xeon(R) ..." or "NVIDIA H200"
  std::string key;      // suggested catalog key, e.g. "cpu-host", "h200-sxm"
  std::string driver;   // driver version, "" on the CPU
  std::map<std::string, std::string> libraries;   // e.g. {"cudnn": "9.19.0", "eigen": "3.4.0"}
  std::map<std::string, std::string> properties;  // SM count, clocks, cores, ...
  int device_count = 1;
};

class KernelBackend {
 public:
  virtual ~KernelBackend() = default;
  virtual DeviceInfo device_info() const = 0;
  // "" when the request can be measured, else why not (e.g. "fp16 needs the cuda backend").
  virtual std::string unsupported_reason(const KernelRequest& request) const = 0;
  // Times the request; throws std::runtime_error on a kernel or library failure.
  virtual std::vector<KernelResult> measure(const KernelRequest& request) = 0;
};

std::unique_ptr<KernelBackend> make_cpu_backend(const TimingOptions& timing);

struct CudaOptions {
  int device = 0;
  std::int64_t workspace_cap_bytes = std::int64_t{1} << 30;  // cap passed to Find…Ex
  TimingOptions timing;
};

// True when this build contains the CUDA backend (SCALECAST_HAVE_CUDA).
bool cuda_backend_built();
// Throws std::runtime_error when the backend is not built or no GPU is visible.
std::unique_ptr<KernelBackend> make_cuda_backend(const CudaOptions& options);

}  // namespace scalecast::kernels
