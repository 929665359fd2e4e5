#pragma once
// The engine-level golden cases of `source: memory` (test_input_golden.cpp): small jobs on the
// test platform whose output files must stay byte-identical to what the engine wrote before the
// input pipeline existed. Uses only the pre-pipeline JobSpec fields, so the same code generated
// the reference files from the engine of that time (scripts/update_input_golden.sh).

#include <simgrid/s4u.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "common/atomic_file.hpp"
#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "sim/outputs.hpp"
#include "sim/scenario.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_platform.hpp"

namespace scalecast::sim::testing {

inline constexpr int kMemoryGoldenCases = 3;

// Runs case `index` (its own process: one SimGrid engine per process) and writes iterations.csv,
// ops.csv, trace.json and point.json into `dir`.
inline void write_memory_golden_case(int index, const std::string& dir) {
  auto engine = create_engine({NetworkMode::kIdeal});
  TestPlatformSpec ps;
  JobSpec spec;
  spec.program = synthetic_program(8, 1e-3, 16, 2e-3, 3e6, 1e-3);
  spec.warmup = 1;
  spec.iterations = 2;
  if (index == 0) {  // flow, Horovod cycle, prefetch
    ps.nodes = 4;
    ps.gpus = 2;
    spec.program.input_bytes = 8e6;
    spec.allreduce.fusion_bytes = 10e6;
    spec.allreduce.cycle_time_s = 5e-3;
    spec.fidelity = Fidelity::kFlow;
    spec.trace_nodes = {0, 3};
  } else if (index == 1) {  // wave with the node-0 shortcut and rails, no prefetch
    ps.nodes = 4;
    ps.gpus = 2;
    spec.program.input_bytes = 8e6;
    spec.allreduce.algorithm = Algorithm::kHierarchical;
    spec.fidelity = Fidelity::kWave;
    spec.prefetch = false;
    spec.nic_groups = {0, 0};
  } else {  // one GPU, a copy longer than compute
    ps.nodes = 1;
    ps.gpus = 1;
    spec.program.input_bytes = 1.6e9;
  }
  TestPlatform platform(ps);
  for (int n = 0; n < ps.nodes; ++n) spec.nodes.push_back(n);
  spec.gpus_per_node = ps.gpus;
  Job job(platform, spec);
  engine->run();
  const JobResult r = job.result();
  const Scenario s = load_scenario_text("platform: summit\nmodel: resnet50\nnodes: 1\n", "g.yaml");
  write_point_files(dir, r);
  common::write_file_atomic(dir + "/point.json", point_json(s, r).dump(2) + "\n");
}

}  // namespace scalecast::sim::testing
