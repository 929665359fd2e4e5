#include "sim/parameter_server.hpp"

#include <algorithm>
#include <stdexcept>

namespace scalecast::sim {

std::string_view to_string(PsPlacement p) { return p == PsPlacement::kCpu ? "cpu" : "colocated"; }
std::string_view to_string(PsMode m) { return m == PsMode::kAsync ? "async" : "sync"; }
std::string_view to_string(PsVariables v) { return v == PsVariables::kGpu ? "gpu" : "cpu"; }

std::optional<PsPlacement> parse_ps_placement(std::string_view text) {
  if (text == "colocated") return PsPlacement::kColocated;
  if (text == "cpu") return PsPlacement::kCpu;
  return std::nullopt;
}
std::optional<PsMode> parse_ps_mode(std::string_view text) {
  if (text == "sync") return PsMode::kSync;
  if (text == "async") return PsMode::kAsync;
  return std::nullopt;
}
std::optional<PsVariables> parse_ps_variables(std::string_view text) {
  if (text == "cpu") return PsVariables::kCpu;
  if (text == "gpu") return PsVariables::kGpu;
  return std::nullopt;
}

std::string_view to_string(PsSharding s) {
  return s == PsSharding::kGreedy ? "greedy" : "round_robin";
}
std::optional<PsSharding> parse_ps_sharding(std::string_view text) {
  if (text == "round_robin") return PsSharding::kRoundRobin;
  if (text == "greedy") return PsSharding::kGreedy;
  return std::nullopt;
}

std::vector<int> round_robin_shards(const StepProgram& program, int tasks) {
  if (tasks < 1) throw std::invalid_argument("parameter servers: expected at least one task");
  const int n = static_cast<int>(program.gradients.size());
  std::vector<int> task(n);
  for (int created = 0; created < n; ++created) task[n - 1 - created] = created % tasks;
  return task;
}

std::vector<int> greedy_shards(const StepProgram& program, int tasks) {
  if (tasks < 1) throw std::invalid_argument("parameter servers: expected at least one task");
  const int n = static_cast<int>(program.gradients.size());
  std::vector<int> task(n);
  std::vector<double> load(static_cast<std::size_t>(tasks), 0.0);
  for (int created = 0; created < n; ++created) {
    const int g = n - 1 - created;
    const auto least = std::min_element(load.begin(), load.end());  // first of equal loads
    task[g] = static_cast<int>(least - load.begin());
    *least += program.gradients[g].bytes;
  }
  return task;
}

std::vector<int> ps_shards(const StepProgram& program, int tasks, PsSharding sharding) {
  return sharding == PsSharding::kGreedy ? greedy_shards(program, tasks)
                                         : round_robin_shards(program, tasks);
}

double ps_update_s(double bytes, double memory_Bps, PsMode mode, int workers) {
  if (!(memory_Bps > 0.0))
    throw std::invalid_argument("parameter servers: the update needs a memory bandwidth > 0");
  const double passes = mode == PsMode::kSync ? workers + 1.0 : 1.0;
  return passes * kUpdateTrafficPerByte * bytes / memory_Bps;
}

double grpc_receive_rate(double bytes, double small_Bps, double large_Bps) {
  if (small_Bps < 0.0 || large_Bps < 0.0)
    throw std::invalid_argument("parameter servers: the gRPC receive rates must be >= 0");
  if (small_Bps == 0.0) return 0.0;  // gRPC free: the switch ParameterServerConfig documents
  if (bytes <= kTfGrpcSmallTensorBytes) return small_Bps;
  if (bytes >= kTfGrpcLargeTensorBytes || large_Bps == 0.0) return large_Bps;
  const double f =
      (bytes - kTfGrpcSmallTensorBytes) / (kTfGrpcLargeTensorBytes - kTfGrpcSmallTensorBytes);
  return small_Bps + f * (large_Bps - small_Bps);
}

double ps_receive_s(double bytes, int messages, double small_Bps, double large_Bps) {
  const double rate = grpc_receive_rate(bytes, small_Bps, large_Bps);
  return rate > 0.0 ? messages * bytes / rate : 0.0;
}

}  // namespace scalecast::sim
