// make_cuda_backend() for every build: the CUDA backend lives in its own module,
// libscalecast_cuda.so, opened here on first use, so that a process which never calibrates on a
// GPU (every `run`, `sweep`, `validate`) does not load cuDNN, cuBLAS(Lt) and NCCL at start-up
// (0.6 s per process here, mostly cuBLASLt's initialisers).

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/kernel_backend.hpp"

namespace scalecast::kernels {
namespace {

constexpr const char* kModuleFile = "libscalecast_cuda.so";
constexpr const char* kFactory = "scalecast_cuda_backend_create";
using Factory = KernelBackend* (*)(const CudaOptions*, char*, std::size_t);

// Where the module may be: $SCALECAST_CUDA_MODULE, next to the running executable (the CLI's
// folder, where the build puts it), and the build tree's copy (for test executables).
std::vector<std::string> module_candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("SCALECAST_CUDA_MODULE"); env != nullptr && *env != '\0')
    paths.emplace_back(env);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) paths.push_back((exe.parent_path() / kModuleFile).string());
#ifdef SCALECAST_CUDA_MODULE_PATH
  paths.emplace_back(SCALECAST_CUDA_MODULE_PATH);
#endif
  return paths;
}

// Opens the module once per process (never closed: backends it made may outlive any caller).
Factory load_factory() {
  static std::mutex mutex;
  static Factory factory = nullptr;
  const std::lock_guard<std::mutex> lock(mutex);
  if (factory != nullptr) return factory;
  std::string tried;
  for (const std::string& path : module_candidates()) {
    if (!std::filesystem::exists(path)) {
      tried += "\n  " + path + ": no such file";
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      tried += "\n  " + path + ": " + (why != nullptr ? why : "dlopen failed");
      continue;
    }
    void* symbol = dlsym(handle, kFactory);
    if (symbol == nullptr) {
      tried += "\n  " + path + ": no symbol " + kFactory;
      continue;
    }
    factory = reinterpret_cast<Factory>(symbol);
    return factory;
  }
  throw std::runtime_error(std::string("cuda: cannot load the CUDA backend module ") + kModuleFile +
                           " (set SCALECAST_CUDA_MODULE to its path); tried:" + tried);
}

}  // namespace

bool cuda_backend_built() {
#ifdef SCALECAST_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

std::unique_ptr<KernelBackend> make_cuda_backend(const CudaOptions& options) {
  if (!cuda_backend_built())
    throw std::runtime_error(
        "the cuda backend is not part of this build (CUDA toolkit, cuDNN or NCCL not found at "
        "configure time)");
  const Factory create = load_factory();
  std::array<char, 1024> error{};
  KernelBackend* backend = create(&options, error.data(), error.size());
  if (backend == nullptr) throw std::runtime_error(error.data());
  return std::unique_ptr<KernelBackend>(backend);
}

}  // namespace scalecast::kernels
