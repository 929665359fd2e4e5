// NCCL collectives over every visible GPU of this process (ncclCommInitAll), timed as nccl-tests
// does: warm-up, then R back-to-back operations between host timestamps with all streams
// synchronised; algbw and busbw by nccl-tests' conventions (cuda_params.hpp).

#include <fmt/format.h>

#include <chrono>

#include "kernels/cuda_support.hpp"

namespace scalecast::kernels::cuda {

std::vector<KernelResult> CudaBackend::collective(const KernelRequest& r) {
  const int n = device_count_;
  const int eb = r.dtype == common::DType::kFp16 || r.dtype == common::DType::kBf16 ? 2 : 4;
  const ncclDataType_t type = r.dtype == common::DType::kFp16   ? ncclHalf
                              : r.dtype == common::DType::kBf16 ? ncclBfloat16
                                                                : ncclFloat;
  const NcclCounts counts = nccl_counts(r.collective, r.size_bytes, eb, n);
  std::vector<int> devs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) devs[static_cast<std::size_t>(i)] = i;
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
  check(ncclCommInitAll(comms.data(), n, devs.data()), "ncclCommInitAll");
  std::vector<cudaStream_t> streams(static_cast<std::size_t>(n));
  std::vector<DeviceBuffer> send, recv;
  for (int i = 0; i < n; ++i) {
    check(cudaSetDevice(i), "cudaSetDevice");
    check(cudaStreamCreate(&streams[static_cast<std::size_t>(i)]), "cudaStreamCreate");
    send.emplace_back(static_cast<std::size_t>(counts.send_count * eb));
    recv.emplace_back(static_cast<std::size_t>(counts.recv_count * eb));
  }
  const auto one_op = [&] {
    check(ncclGroupStart(), "ncclGroupStart");
    for (int i = 0; i < n; ++i) {
      const auto u = static_cast<std::size_t>(i);
      const auto sc = static_cast<std::size_t>(counts.send_count);
      const auto rc = static_cast<std::size_t>(counts.recv_count);
      switch (r.collective) {
        case CollectiveKind::kAllReduce:
          check(
              ncclAllReduce(send[u].get(), recv[u].get(), sc, type, ncclSum, comms[u], streams[u]),
              "ncclAllReduce");
          break;
        case CollectiveKind::kAllGather:
          check(ncclAllGather(send[u].get(), recv[u].get(), sc, type, comms[u], streams[u]),
                "ncclAllGather");
          break;
        case CollectiveKind::kReduceScatter:
          check(ncclReduceScatter(send[u].get(), recv[u].get(), rc, type, ncclSum, comms[u],
                                  streams[u]),
                "ncclReduceScatter");
          break;
        case CollectiveKind::kBroadcast:
          check(ncclBroadcast(send[u].get(), recv[u].get(), sc, type, 0, comms[u], streams[u]),
                "ncclBroadcast");
          break;
      }
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
  };
  const auto sync_all = [&] {
    for (int i = 0; i < n; ++i) {
      check(cudaSetDevice(i), "cudaSetDevice");
      check(cudaStreamSynchronize(streams[static_cast<std::size_t>(i)]), "cudaStreamSynchronize");
    }
  };
  KernelResult res;
  res.selection = "fixed";
  res.algorithm = fmt::format("nccl {} (NCCL_ALGO default)", to_string(r.collective));
  res.ranks = n;
  res.timing = time_until_stable(
      [&](int reps) {
        sync_all();
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < reps; ++k) one_op();
        sync_all();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      },
      options_.timing);
  res.algbw_Bps = nccl_algbw(counts.bytes, res.timing.median_s);
  res.busbw_Bps = nccl_busbw(r.collective, n, counts.bytes, res.timing.median_s);
  for (int i = 0; i < n; ++i) {
    cudaSetDevice(i);
    cudaStreamDestroy(streams[static_cast<std::size_t>(i)]);
    ncclCommDestroy(comms[static_cast<std::size_t>(i)]);
  }
  send.clear();
  recv.clear();
  check(cudaSetDevice(options_.device), "cudaSetDevice");
  return {res};
}

}  // namespace scalecast::kernels::cuda
