#include "sim/scenario_runner.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/zoo.hpp"
#include "platforms/platform.hpp"
#include "sim/cluster.hpp"
#include "sim/engine_setup.hpp"
#include "sim/platform_builder.hpp"

namespace scalecast::sim {

const char* tier_name(calibration::CostTier tier) {
  switch (tier) {
    case calibration::CostTier::kExact:
      return "exact";
    case calibration::CostTier::kInterpolated:
      return "interpolated";
    case calibration::CostTier::kFitted:
      return "fitted";
    case calibration::CostTier::kDatasheet:
      return "datasheet";
  }
  return "?";
}

StepProgram build_program(const models::TrainingStep& step, const calibration::CostModel& cost,
                          const platforms::GpuSpec& gpu, int batch_per_gpu, double input_bytes) {
  StepProgram p;
  p.batch_per_gpu = batch_per_gpu;
  p.input_bytes = input_bytes;
  p.gpu_sms = gpu.sms;
  const auto& ops = step.ops();
  p.ops.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const models::Op& op = ops[i];
    const calibration::OpCost c = cost.op_time(op, gpu);
    // The last guard before the engine: no op may run for a NaN, infinite or negative time.
    if (!std::isfinite(c.time_s) || c.time_s < 0.0)
      throw std::invalid_argument("op " + op.name + " on " + gpu.name + ": the cost model (" +
                                  tier_name(c.tier) + " tier) gave a duration of " +
                                  std::to_string(c.time_s) +
                                  " s; expected a finite time >= 0 (check the calibration data)");
    ProgramOp po;
    po.name = op.name;
    po.stream = op.op_class == models::OpClass::kMemcpy ? Stream::kCopy : Stream::kCompute;
    po.duration_s = c.time_s;
    po.tier = tier_name(c.tier);
    const bool compute = op.op_class == models::OpClass::kConv ||
                         op.op_class == models::OpClass::kGemm ||
                         op.op_class == models::OpClass::kAttention;
    const double peak = compute ? gpu.peak_flops(op.dtype, op.tensor_core) : 0.0;
    if (peak > 0.0 && op.flops > 0.0 && c.time_s > 0.0) {
      const double ratio =
          op.flops / c.time_s / ((op.op_class == models::OpClass::kConv ? 2.0 : 1.0) * peak);
      if (ratio > 1.0 + 1e-9) {
        ++p.above_peak_ops;
        p.above_peak_max_ratio = std::max(p.above_peak_max_ratio, ratio);
      }
    }
    po.preds.assign(step.predecessors(i).begin(), step.predecessors(i).end());
    po.optimizer = op.pass == models::Pass::kOptimizer;
    p.ops.push_back(std::move(po));
  }
  for (const models::GradientTensor& g : step.gradients())
    p.gradients.push_back({g.name, g.bytes, g.ready_after});
  return p;
}

models::TrainingStep scenario_step(const Scenario& s, const models::Model& model) {
  models::StepOptions options;
  options.batch = s.batch_per_gpu;
  options.precision = s.precision;
  options.seq_len = s.seq_len;  // 0: the model's default
  options.fused_attention = s.fused_attention;
  return models::build_training_step(model, options);
}

double scenario_sample_bytes(const Scenario& s, const models::Model& m,
                             const models::TrainingStep& step) {
  if (s.input_sample_bytes > 0.0) return s.input_sample_bytes;
  if (m.input.tokens) return 4.0 * static_cast<double>(std::max<std::int64_t>(1, step.seq_len()));
  return static_cast<double>(m.input.c * m.input.h * m.input.w);
}

namespace {

// Parameter servers, MPI on the CPU and TCP: where the tasks are, the memory bandwidths they
// work at and the TCP stream limit of the NIC (sim/README.md "Parameter servers", "MPI on the
// CPU", "Transports"). Missing platform facts are refused when the scenario is loaded
// (sim/scenario_strategy.cpp); here they are errors too.
void set_host_exchange(const Scenario& s, const MachinePlatform& platform, JobSpec& spec) {
  const platforms::NodeType& first = platform.node_type(spec.nodes.front());
  if (s.allreduce.transport == Transport::kTcp) spec.tcp = tcp_params_for(first.nic.technology);
  if (s.allreduce.library == Library::kMpiCpu) {
    spec.cpu_memory_Bps = first.cpu.memory_bandwidth_Bps;
    spec.cpu_core_Bps = kOneCoreStreamBps;
  }
  const ParameterServerConfig& ps = s.parameter_server;
  if (s.strategy != "parameter_server" || ps.tasks <= 0) return;
  spec.ps = ps;
  std::vector<int> hosts;
  if (ps.placement == PsPlacement::kColocated) {
    hosts = spec.nodes;
    // The loader holds every listed point to tasks <= nodes; only `run`'s 1-GPU and 1-node
    // baselines have fewer nodes: they keep one task per node (scenarios/README.md).
    spec.ps.tasks = std::min(ps.tasks, static_cast<int>(hosts.size()));
  } else {
    for (int n = 0; n < platform.node_count(); ++n)
      if (std::find(spec.nodes.begin(), spec.nodes.end(), n) == spec.nodes.end())
        hosts.push_back(n);
  }
  if (static_cast<int>(hosts.size()) < spec.ps.tasks)
    throw std::invalid_argument("parameter_server.tasks: " + std::to_string(ps.tasks) +
                                " tasks on CPU hosts of their own need as many nodes beside the "
                                "job's; the machine has " +
                                std::to_string(hosts.size()));
  for (int k = 0; k < spec.ps.tasks; ++k) {
    const platforms::NodeType& t = platform.node_type(hosts[k]);
    spec.ps_nodes.push_back(hosts[k]);
    spec.ps_memory_Bps.push_back(ps.variables == PsVariables::kGpu ? t.gpu.memory_bandwidth
                                                                   : t.cpu.memory_bandwidth_Bps);
  }
}

}  // namespace

JobResult run_point(const Scenario& s, const PointRequest& request,
                    const calibration::CostModel& cost_model,
                    const calibration::Database* collectives_db) {
  // The machine as large as the scenario asks (cluster.nodes), or as the point needs
  // (sim/cluster.hpp).
  // Parameter servers on CPU hosts of their own need nodes beside the job's.
  const ParameterServerConfig& ps = s.parameter_server;
  const int ps_own_nodes = ps.tasks > 0 && ps.placement == PsPlacement::kCpu ? ps.tasks : 0;
  const platforms::Platform machine =
      sized_platform(s, platforms::load_platform(s.platform), request.nodes + ps_own_nodes);
  auto engine = create_engine({s.network});
  BuildOptions options;
  options.network = s.network;
  // Packed placement builds only the nodes it uses; spread needs the whole machine.
  options.nodes = s.placement == Placement::kPacked ? request.nodes + ps_own_nodes : 0;
  auto platform = build_platform(*engine, machine, options);
  Job job(*platform,
          point_job_spec(s, request, {}, machine, platform.get(), cost_model, collectives_db));
  engine->run();
  JobResult result = job.result();
  keep_engine_until_exit(std::move(engine));  // its teardown is the process exit's
  return result;
}

JobSpec point_job_spec(const Scenario& s, const PointRequest& request,
                       const std::vector<int>& node_list, const platforms::Platform& machine,
                       const MachinePlatform* platform, const calibration::CostModel& cost_model,
                       const calibration::Database* collectives_db) {
  if (!node_list.empty() && static_cast<int>(node_list.size()) != request.nodes)
    throw std::invalid_argument("point_job_spec: the node list has " +
                                std::to_string(node_list.size()) + " nodes, the request " +
                                std::to_string(request.nodes));
  JobSpec spec;
  spec.name = s.name;
  for (int i = 0; i < request.nodes; ++i)
    spec.nodes.push_back(
        !node_list.empty() ? node_list[i]
        : s.placement == Placement::kPacked
            ? i
            : static_cast<int>(static_cast<long>(i) * platform->node_count() / request.nodes));
  const int available = platform->gpus_per_node(spec.nodes.front());
  const int wanted = request.gpus_per_node > 0 ? request.gpus_per_node : s.gpus_per_node;
  // More GPUs than the node has is an error (the scenario loader reports it for the file's
  // gpus_per_node; this catches a request), never a silent clamp.
  if (wanted > available)
    throw std::invalid_argument("the point asks for " + std::to_string(wanted) +
                                " GPUs per node; a " + machine.name + " node (" +
                                platform->node_type(spec.nodes.front()).name + ") has " +
                                std::to_string(available));
  spec.gpus_per_node = wanted > 0 ? wanted : available;
  const models::Model model = models::load_model(s.model);
  const models::TrainingStep step = scenario_step(s, model);
  const double input_bytes = s.batch_per_gpu * scenario_sample_bytes(s, model, step);
  // One step program per GPU type among the job's nodes (a heterogeneous machine's partitions):
  // the same step priced on each. GPUs that differ only in memory size (Summit's 32 GB
  // high-memory nodes) price the same and share a program.
  const auto same_speed = [](const platforms::GpuSpec& a, const platforms::GpuSpec& g) {
    return g.name == a.name ||
           (g.fp64_flops == a.fp64_flops && g.fp32_flops == a.fp32_flops &&
            g.fp16_flops == a.fp16_flops && g.tensor_fp16_flops == a.tensor_fp16_flops &&
            g.tensor_bf16_flops == a.tensor_bf16_flops &&
            g.tensor_tf32_flops == a.tensor_tf32_flops &&
            g.tensor_fp8_flops == a.tensor_fp8_flops && g.memory_bandwidth == a.memory_bandwidth);
  };
  std::vector<const platforms::GpuSpec*> types;
  std::vector<int> node_program;
  for (int n : spec.nodes) {
    const platforms::GpuSpec& gpu = platform->node_type(n).gpu;
    std::size_t k = 0;
    while (k < types.size() && !same_speed(*types[k], gpu)) ++k;
    if (k == types.size()) types.push_back(&gpu);
    node_program.push_back(static_cast<int>(k));
  }
  spec.program = build_program(step, cost_model, *types.front(), s.batch_per_gpu, input_bytes);
  if (types.size() > 1) {
    for (const platforms::GpuSpec* gpu : types)
      spec.programs.push_back(build_program(step, cost_model, *gpu, s.batch_per_gpu, input_bytes));
    spec.node_program = std::move(node_program);
  }
  // Gradient accumulation: the micro-batches of an iteration, one exchange after the last.
  if (s.accumulation > 1) {
    spec.program = accumulate_micro_batches(spec.program, s.accumulation);
    for (StepProgram& p : spec.programs) p = accumulate_micro_batches(p, s.accumulation);
  }
  // Fixed host costs go on every program, outside the cost model's framework efficiency.
  const auto fixed = [&](StepProgram& p) {
    p.dispatch_per_op_s = s.fixed_costs.dispatch_per_op_s;
    p.fixed_per_iteration_s = s.fixed_costs.per_iteration_s;
  };
  fixed(spec.program);
  for (StepProgram& p : spec.programs) fixed(p);
  spec.allreduce = s.allreduce;
  if (s.allreduce.library == Library::kNccl && s.allreduce.nccl_tuner) {
    // NCCL's tuning model for this communicator: the first node's type stands for the job's.
    const platforms::NodeType& type = platform->node_type(spec.nodes.front());
    const auto tuner = [&](int nodes, int gpus) {
      auto m = std::make_shared<calibration::CollectiveModel>(
          calibration::nccl_topology(machine, type, nodes, gpus, collnet_enabled(s.allreduce)));
      if (collectives_db) m->use_measurements(*collectives_db, types.front()->name);
      return m;
    };
    spec.collectives = tuner(request.nodes, spec.gpus_per_node);
    const double probe = s.allreduce.fusion_bytes > 0 ? s.allreduce.fusion_bytes : 1.0;
    if (s.allreduce.algorithm == Algorithm::kHierarchical) {
      spec.collectives_intra = tuner(1, spec.gpus_per_node);
      spec.collectives_inter = tuner(request.nodes, 1);
      if (request.nodes > 1)
        spec.collectives_inter->choose(probe / spec.gpus_per_node,
                                       s.allreduce.inter_node == Algorithm::kTree
                                           ? calibration::NcclAlgo::kTree
                                           : calibration::NcclAlgo::kRing,
                                       s.allreduce.protocol);
    } else {
      // An algorithm or protocol the machine cannot run is an input error, before simulating.
      spec.collectives->choose(probe, nccl_algo_of(s.allreduce.algorithm), s.allreduce.protocol);
    }
  }
  spec.fidelity =
      resolve_fidelity(s.fidelity, request.nodes * spec.gpus_per_node, s.flow_limit_gpus);
  spec.warmup = s.warmup;
  spec.iterations = s.iterations;
  spec.on_iteration = request.on_iteration;
  spec.prefetch = s.prefetch;
  spec.input = s.input;
  if (spec.input.decode_samples_per_s > 0.0 && spec.input.decode_cores <= 0.0) {
    // Default: the node's usable CPU cores (platform file, cpu.sockets x cpu.cores_per_socket)
    // shared evenly by its GPUs, one loader per GPU.
    const platforms::NodeType& t = platform->node_type(spec.nodes.front());
    spec.input.decode_cores =
        static_cast<double>(t.cpu.sockets * t.cpu.cores_per_socket) / std::max(1, t.gpu_count);
  }
  spec.trace_nodes = trace_nodes_for(s, request.nodes);
  spec.compute_noise_cv = s.compute_noise_cv;
  spec.straggler_fraction = s.straggler_fraction;
  spec.straggler_slowdown = s.straggler_slowdown;
  spec.seed = s.seed;
  for (int g = 0; g < spec.gpus_per_node; ++g)
    spec.nic_groups.push_back(platform->nic_of_gpu(spec.nodes.front(), g));
  set_host_exchange(s, *platform, spec);
  return spec;
}

}  // namespace scalecast::sim
