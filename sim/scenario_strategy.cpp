#include "sim/scenario_strategy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/training_step.hpp"
#include "models/zoo.hpp"
#include "sim/scenario_runner.hpp"
#include "sim/transport.hpp"

namespace scalecast::sim {
namespace {

// The largest gRPC receive rate a scenario may give: 1 TB/s, beyond any memory copy.
constexpr double kMaxReceiveRate_Bps = 1e12;
constexpr double kMinReceiveRate_Bps = 1e3;

template <class T, class F>
T choice(const common::ConfigNode& n, F parse, const char* allowed) {
  const auto v = parse(n.as_string());
  if (!v) n.fail(std::string("expected one of ") + allowed + ", got \"" + n.as_string() + "\"");
  return *v;
}

// The memory bandwidth of every node type's CPU socket must be known where the CPU does the work.
void require_cpu_memory_bandwidth(const common::ConfigNode& at, const platforms::Platform& m,
                                  const std::string& why) {
  for (const platforms::NodeType& t : m.node_types)
    if (!(t.cpu.memory_bandwidth_Bps > 0.0))
      at.fail(fmt::format(
          "platform {} gives no cpu.memory_bandwidth for node type {}; {} runs at it (add "
          "node_types.{}.cpu.memory_bandwidth to the platform file)",
          m.name, t.name, why, t.name));
}

// Every matrix op (conv, GEMM, attention) the step computes must have a peak on every GPU the
// job may run on (each node type's): where no kernel measurement prices an op, the datasheet
// tier divides by that peak, and a GPU without one (a platform's own V100 entry without
// tensor_fp16, at precision fp16) stopped the point inside the cost model with exit 4.
void check_precision_peaks(const common::ConfigNode& root, const Scenario& s,
                           const platforms::Platform& machine) {
  if (root.has("parallel")) return;  // an LLM job: checked at parallel.precision (llm_setup)
  std::vector<std::pair<common::DType, bool>> needed;  // (dtype, on tensor cores)
  try {
    const models::TrainingStep step = scenario_step(s, models::load_model(s.model));
    for (const models::Op& op : step.ops()) {
      const bool matrix = op.op_class == models::OpClass::kConv ||
                          op.op_class == models::OpClass::kGemm ||
                          op.op_class == models::OpClass::kAttention;
      const std::pair<common::DType, bool> k{op.dtype, op.tensor_core};
      if (matrix && std::find(needed.begin(), needed.end(), k) == needed.end()) needed.push_back(k);
    }
  } catch (const std::exception&) {
    return;  // the model's own error is reported at its key by the memory check or the run
  }
  for (const platforms::NodeType& t : machine.node_types) {
    for (const auto& [dtype, tc] : needed) {
      if (t.gpu.peak_flops(dtype, tc) > 0.0) continue;
      const std::string msg = fmt::format(
          "expected a precision every GPU the job may run on has a peak for: {} (node type {} of "
          "{}) has no {}{} peak (add {} to its catalog entry, or use fp32)",
          t.gpu.name, t.name, machine.name, common::to_string(dtype), tc ? " tensor-core" : "",
          tc ? fmt::format("tensor_{}", common::to_string(dtype))
             : std::string(common::to_string(dtype)));
      if (auto v = root.optional("precision")) v->fail(msg + ", got \"" + v->as_string() + "\"");
      root.required("model").fail(msg);
    }
  }
}

}  // namespace

void load_strategy(const common::ConfigNode& root, Scenario& s,
                   const platforms::Platform& machine) {
  const auto strategy = root.optional("strategy");
  if (strategy) {
    s.strategy = strategy->as_string();
    if (s.strategy != "data_parallel" && s.strategy != "parameter_server")
      strategy->fail("expected data_parallel or parameter_server, got \"" + s.strategy + "\"");
  }
  const auto block = root.optional("parameter_server");
  if (s.strategy == "parameter_server") {
    // At the strategy key (its path, so a --set that chose the strategy is the place named).
    if (!block)
      strategy->fail(
          "parameter_server needs a parameter_server block: a map with tasks (and placement, "
          "mode, variables), e.g. parameter_server: {tasks: 4}");
    if (!block->is_map())
      block->fail(
          "expected a map with tasks, placement, mode, variables, sharding, receive_rate, "
          "receive_rate_large");
    block->check_keys({"tasks", "placement", "mode", "variables", "sharding", "receive_rate",
                       "receive_rate_large"});
    ParameterServerConfig& ps = s.parameter_server;
    const common::ConfigNode tasks = block->required("tasks");
    ps.tasks = tasks.as_int_field(1, 1'000'000);
    if (auto v = block->optional("placement"))
      ps.placement = choice<PsPlacement>(*v, parse_ps_placement, "colocated, cpu");
    if (auto v = block->optional("mode"))
      ps.mode = choice<PsMode>(*v, parse_ps_mode, "sync, async");
    if (auto v = block->optional("variables"))
      ps.variables = choice<PsVariables>(*v, parse_ps_variables, "cpu, gpu");
    if (auto v = block->optional("sharding"))
      ps.sharding = choice<PsSharding>(*v, parse_ps_sharding, "round_robin, greedy");
    // Each process's gRPC receive rate (parameter_server.hpp, kTfGrpcReceiveBps), and the rate
    // for tensors of 128 MB and more (kTfGrpcReceiveLargeBps); 0 = free. Given alone,
    // receive_rate also caps the large-tensor rate, so a faster gRPC is not slowed down by the
    // default large-tensor rate and 0 makes every tensor free.
    const auto rate = [](const common::ConfigNode& v) {
      const double r = v.as_quantity_in(common::Quantity::kBandwidth, 0.0, kMaxReceiveRate_Bps);
      // 0 = free; a rate below 1 kB/s takes hours per megabyte, and a denormal one made
      // SimGrid abort on an infinite sleep.
      if (r > 0.0 && r < kMinReceiveRate_Bps)
        v.fail("expected 0 (free) or at least 1 kB/s, got \"" + v.as_string() + "\"");
      return r;
    };
    if (auto v = block->optional("receive_rate")) {
      ps.receive_Bps = rate(*v);
      ps.receive_large_Bps = std::min(ps.receive_Bps, kTfGrpcReceiveLargeBps);
    }
    if (auto v = block->optional("receive_rate_large")) ps.receive_large_Bps = rate(*v);
    // Colocated tasks run one per job node; CPU tasks on nodes of their own beside the job's.
    for (std::size_t i = 0; i < s.nodes.size(); ++i) {
      const int n = s.nodes[i];
      if (ps.placement == PsPlacement::kColocated && ps.tasks > n)
        tasks.fail(fmt::format(
            "expected at most {} (placement colocated puts one task on each of the job's nodes "
            "and the point at nodes[{}] has {} node{}), got {}",
            n, i, n, n == 1 ? "" : "s", ps.tasks));
      if (ps.placement == PsPlacement::kCpu && s.cluster_nodes > 0 &&
          n + ps.tasks > s.cluster_nodes)
        tasks.fail(fmt::format(
            "expected at most {} (placement cpu needs nodes of its own: cluster.nodes is {} and "
            "the point at nodes[{}] uses {}), got {}",
            std::max(0, s.cluster_nodes - n), s.cluster_nodes, i, n, ps.tasks));
    }
    if (ps.variables == PsVariables::kCpu)
      require_cpu_memory_bandwidth(block->optional("variables").value_or(tasks), machine,
                                   "the parameter servers' update of variables in CPU memory");
  } else if (block) {
    block->fail("expected only with strategy: parameter_server");
  }
  const auto allreduce = root.optional("allreduce");
  // Parameter servers push and pull each variable over gRPC: of the exchange settings only the
  // transport applies.
  if (s.strategy == "parameter_server" && allreduce && allreduce->is_map())
    for (const auto& [key, v] : allreduce->entries())
      if (key != "transport")
        v.fail(
            "not used with strategy parameter_server: the parameter servers push and pull each "
            "variable (no all-reduce); only allreduce.transport applies");
  if (s.allreduce.library == Library::kMpiCpu)
    require_cpu_memory_bandwidth(allreduce->required("library"), machine,
                                 "allreduce library mpi_cpu's reduction in host memory");
  // The transport key where the scenario gives one.
  const std::optional<common::ConfigNode> transport_key =
      allreduce && allreduce->is_map() ? allreduce->optional("transport") : std::nullopt;
  // NICs without RDMA carry only TCP/IP: NCCL then runs over its socket transport, MPI and gRPC
  // over TCP (platforms/README.md `nics.rdma`). Without a transport key that is the transport;
  // asking for the native one there is an error.
  const auto no_rdma =
      std::find_if(machine.node_types.begin(), machine.node_types.end(),
                   [](const platforms::NodeType& t) { return t.nic.count > 0 && !t.nic.rdma; });
  if (no_rdma != machine.node_types.end()) {
    if (transport_key && s.allreduce.transport == Transport::kNative)
      transport_key->fail(
          fmt::format("expected tcp: platform {} node type {} has NICs without RDMA "
                      "(nics.rdma: false), so its collectives run over TCP/IP",
                      machine.name, no_rdma->name));
    s.allreduce.transport = Transport::kTcp;
  }
  check_precision_peaks(root, s, machine);
  if (s.allreduce.transport == Transport::kTcp) {
    // At the transport key, or at the platform when the platform's NICs chose TCP.
    const common::ConfigNode at =
        transport_key ? *transport_key : root.optional("platform").value_or(root);
    for (const platforms::NodeType& t : machine.node_types) {
      try {
        tcp_params_for(t.nic.technology);
      } catch (const std::invalid_argument& e) {
        at.fail(fmt::format("platform {} node type {}: {}", machine.name, t.name, e.what()));
      }
    }
  }
}

}  // namespace scalecast::sim
