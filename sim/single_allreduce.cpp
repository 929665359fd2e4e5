#include "sim/single_allreduce.hpp"

#include <chrono>
#include <simgrid/s4u.hpp>

#include "platforms/platform.hpp"
#include "sim/engine_setup.hpp"
#include "sim/platform_builder.hpp"

namespace scalecast::sim {

SingleAllReduceRun replay_single_allreduce(const SingleAllReduce& s) {
  const auto t0 = std::chrono::steady_clock::now();
  const platforms::Platform machine = platforms::load_platform(s.platform);
  auto engine = create_engine({NetworkMode::kCalibrated});
  BuildOptions options;
  options.nodes = s.nodes;
  options.network = NetworkMode::kCalibrated;
  auto platform = build_platform(*engine, machine, options);

  JobSpec spec;
  spec.name = "allreduce";
  for (int n = 0; n < s.nodes; ++n) spec.nodes.push_back(n);
  spec.gpus_per_node = s.gpus_per_node;
  spec.program.ops.push_back({"produce", Stream::kCompute, 0.0, "exact", {}, false});
  spec.program.gradients.push_back({"buffer", s.bytes, 0});
  spec.allreduce.nccl_tuner = false;
  spec.allreduce.algorithm = s.algorithm;
  spec.allreduce.fusion_bytes = s.bytes;
  spec.allreduce.cycle_time_s = 0.0;
  spec.fidelity = s.fidelity;
  spec.prefetch = true;
  spec.warmup = 0;
  spec.iterations = 1;
  for (int g = 0; g < s.gpus_per_node; ++g) spec.nic_groups.push_back(platform->nic_of_gpu(0, g));
  Job job(*platform, spec);
  SingleAllReduceRun run;
  run.setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  engine->run();
  run.result = job.result();
  keep_engine_until_exit(std::move(engine));
  return run;
}

}  // namespace scalecast::sim
