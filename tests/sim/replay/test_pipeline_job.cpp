// The LLM pipeline job on small platforms built in the test (ideal network, no latency): the
// pipeline bubble of GPipe, 1F1B and interleaved 1F1B as simulated against the closed forms for
// equal stages, exposed TP communication with and without overlap, and data-parallel
// all-reduces that cross the inter-node links when the replicas are on different nodes.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <memory>
#include <vector>

#include "platforms/platform.hpp"
#include "sim/engine_setup.hpp"
#include "sim/pipeline_job.hpp"
#include "sim/platform_builder.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast;
using namespace scalecast::sim;
using namespace scalecast::sim::testing;

namespace {

// A job whose every chunk costs tf forward and tb backward per micro-batch, no communication.
PipelineJobSpec equal_stages(models::PipelineSchedule schedule, int pp, int v, int m, double tf,
                             double tb) {
  PipelineJobSpec s;
  s.parallel.pp = pp;
  s.parallel.virtual_stages = v;
  s.parallel.schedule = schedule;
  s.parallel.micro_batch = 1;
  s.parallel.global_batch = m;
  for (int c = 0; c < pp * v; ++c) {
    PricedChunk pc;
    pc.forward.push_back({tf / v, {}});
    pc.backward.push_back({tb / v, {}});
    s.chunks.push_back(pc);
  }
  for (int n = 0; n < pp; ++n) s.nodes.push_back(n);
  s.gpus_per_node = 1;
  s.warmup = 1;
  s.iterations = 2;
  return s;
}

double bubble_fraction(const PipelineResult& r, int stage) {
  return r.stages[static_cast<std::size_t>(stage)].bubble_s / r.iteration_time_s;
}

void check_bubble(models::PipelineSchedule schedule, int p, int v, int m) {
  auto engine = create_engine({NetworkMode::kIdeal});
  TestPlatform platform(no_latency(p, 1));
  const double tf = 1e-3, tb = 2e-3;
  PipelineJob job(platform, equal_stages(schedule, p, v, m, tf, tb));
  engine->run();
  const PipelineResult r = job.result();
  const double bubble = (p - 1) * (tf + tb) / v;  // Narayanan et al. 2021, eq. 1 and 2
  const double expected_iteration = m * (tf + tb) + bubble;
  const double expected_fraction = bubble / expected_iteration;  // 1F1B: (p-1)/(m+p-1)
  INFO("p " << p << " v " << v << " m " << m << ": iteration expected " << expected_iteration
            << " s, actual " << r.iteration_time_s << " s");
  CHECK(r.iteration_time_s == doctest::Approx(expected_iteration).epsilon(1e-9));
  for (int st = 0; st < p; ++st) {
    INFO("stage " << st << ": bubble fraction expected " << expected_fraction << ", actual "
                  << bubble_fraction(r, st));
    CHECK(bubble_fraction(r, st) == doctest::Approx(expected_fraction).epsilon(1e-9));
    CHECK(r.stages[static_cast<std::size_t>(st)].total() ==
          doctest::Approx(r.iteration_time_s).epsilon(1e-9));
    CHECK(r.stages[static_cast<std::size_t>(st)].compute_s ==
          doctest::Approx(m * (tf + tb)).epsilon(1e-9));
  }
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("pipeline: the simulated 1F1B bubble is (p-1)/(m+p-1) of the step") {
    check_bubble(models::PipelineSchedule::k1F1B, 4, 1, 8);
  }
  TEST_CASE("pipeline: the simulated 1F1B bubble with as many micro-batches as stages") {
    check_bubble(models::PipelineSchedule::k1F1B, 8, 1, 8);
  }
  TEST_CASE("pipeline: GPipe has the same bubble as 1F1B") {
    check_bubble(models::PipelineSchedule::kGPipe, 4, 1, 8);
  }
  TEST_CASE("pipeline: interleaved 1F1B with v virtual stages has 1/v of the bubble") {
    check_bubble(models::PipelineSchedule::kInterleaved1F1B, 4, 2, 8);
    // The bubble itself (not only the fraction) is 1/v of 1F1B's: (p-1)(tf+tb)/v.
  }
  TEST_CASE("pipeline: interleaved 1F1B, 4 virtual stages, 16 micro-batches") {
    check_bubble(models::PipelineSchedule::kInterleaved1F1B, 4, 4, 16);
  }

  TEST_CASE("pipeline: a TP all-reduce is exposed, or hidden under the next segment with overlap") {
    // Two jobs on two nodes of one platform (one engine per process), without and with overlap.
    const double bytes = 100e6;
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps = no_latency(2, 2);
    TestPlatform platform(ps);
    std::vector<std::unique_ptr<PipelineJob>> jobs;
    for (const bool overlap : {false, true}) {
      PipelineJobSpec s;
      s.name = overlap ? "overlap" : "plain";
      s.parallel.tp = 2;
      s.parallel.overlap_tp_comm = overlap;
      PricedChunk pc;
      models::LlmComm ar{"tp_ar", models::CommGroup::kTp, models::CommKind::kAllReduce, bytes, 1,
                         true};
      pc.forward.push_back({1e-3, {ar}});
      pc.forward.push_back({10e-3, {}});
      s.chunks.push_back(pc);
      s.nodes = {overlap ? 1 : 0};
      s.gpus_per_node = 2;
      jobs.push_back(std::make_unique<PipelineJob>(platform, s));
    }
    engine->run();
    for (const bool overlap : {false, true}) {
      const PipelineResult r = jobs[overlap ? 1 : 0]->result();
      // Ring of 2: each GPU sends 2(n-1)/n S = S through its own link and the peer's.
      const double ar_s = bytes / ps.gpu_link_bw;
      const double expected = overlap ? 0.0 : ar_s;
      INFO("overlap " << overlap << ": exposed TP expected " << expected << " s, actual "
                      << r.stages[0].exposed_tp_s);
      CHECK(r.stages[0].exposed_tp_s == doctest::Approx(expected).epsilon(1e-6).scale(1e-12));
      CHECK(r.iteration_time_s == doctest::Approx(11e-3 + expected).epsilon(1e-6));
      CHECK(r.bytes_per_iteration.at("tp") == doctest::Approx(2 * bytes).epsilon(1e-9));
    }
  }

  TEST_CASE("pipeline: DP replicas on different nodes all-reduce over the NICs") {
    // Two DP replicas, zero compute, one gradient all-reduce of S: on one node (job "near", node
    // 0) it crosses the GPUs' links (50 GB/s), on two nodes (job "far", nodes 1 and 2) the NICs
    // (12.5 GB/s).
    const double bytes = 500e6;
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps = no_latency(3, 2);
    TestPlatform platform(ps);
    std::vector<std::unique_ptr<PipelineJob>> jobs;
    for (const bool far : {false, true}) {
      PipelineJobSpec s;
      s.name = far ? "far" : "near";
      s.parallel.dp = 2;
      s.parallel.global_batch = 2;
      PricedChunk pc;
      pc.forward.push_back({0.0, {}});
      pc.backward.push_back({0.0, {}});
      pc.dp_comms.push_back(
          {"grad_ar", models::CommGroup::kDp, models::CommKind::kAllReduce, bytes, 1, true});
      s.chunks.push_back(pc);
      s.nodes = far ? std::vector<int>{1, 2} : std::vector<int>{0};
      s.gpus_per_node = far ? 1 : 2;
      jobs.push_back(std::make_unique<PipelineJob>(platform, s));
    }
    engine->run();
    double times[2] = {0.0, 0.0};
    for (const bool far : {false, true}) {
      const PipelineResult r = jobs[far ? 1 : 0]->result();
      const double bw = far ? ps.nic_bw : ps.gpu_link_bw;
      INFO((far ? "far" : "near") << ": expected " << bytes / bw << " s, actual "
                                  << r.iteration_time_s);
      CHECK(r.iteration_time_s == doctest::Approx(bytes / bw).epsilon(1e-6));
      CHECK(r.stages[0].exposed_dp_s == doctest::Approx(r.iteration_time_s).epsilon(1e-9));
      CHECK(r.bytes_per_iteration.at("dp") == doctest::Approx(2 * bytes).epsilon(1e-9));
      times[far ? 1 : 0] = r.iteration_time_s;
    }
    CHECK(times[1] > 3.9 * times[0]);
  }

  TEST_CASE(
      "pipeline: DP gradient reduction overlaps the last micro-batch's backward, per segment") {
    // Two DP replicas on two nodes, one micro-batch whose backward is 4 segments of 10 ms, one
    // gradient all-reduce of S (S / 12.5 GB/s = 16 ms over the NICs). With overlap the reduction
    // goes in 4 pieces, each launched after its segment: only the last piece (4 ms) is exposed.
    // Without overlap all 16 ms are.
    const double bytes = 200e6, seg_s = 10e-3;
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps = no_latency(4, 1);
    TestPlatform platform(ps);
    std::vector<std::unique_ptr<PipelineJob>> jobs;
    for (const bool overlap : {true, false}) {
      PipelineJobSpec s;
      s.name = overlap ? "overlap" : "after";
      s.parallel.dp = 2;
      s.parallel.global_batch = 2;
      s.parallel.overlap_dp_comm = overlap;
      PricedChunk pc;
      pc.forward.push_back({seg_s, {}});
      for (int k = 0; k < 4; ++k) pc.backward.push_back({seg_s, {}});
      pc.dp_comms.push_back(
          {"grad_ar", models::CommGroup::kDp, models::CommKind::kAllReduce, bytes, 1, true});
      s.chunks.push_back(pc);
      s.nodes = overlap ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
      jobs.push_back(std::make_unique<PipelineJob>(platform, s));
    }
    engine->run();
    const double ar_s = bytes / ps.nic_bw;  // ring of 2: S each way per GPU
    for (const bool overlap : {true, false}) {
      const PipelineResult r = jobs[overlap ? 0 : 1]->result();
      const double expected = overlap ? ar_s / 4 : ar_s;
      INFO("overlap " << overlap << ": exposed DP expected " << expected << " s, actual "
                      << r.stages[0].exposed_dp_s);
      CHECK(r.stages[0].exposed_dp_s == doctest::Approx(expected).epsilon(1e-6));
      CHECK(r.iteration_time_s == doctest::Approx(5 * seg_s + expected).epsilon(1e-6));
      CHECK(r.bytes_per_iteration.at("dp") == doctest::Approx(2 * bytes).epsilon(1e-9));
    }
  }

  TEST_CASE("pipeline: replaying a node-filling TP group's repeated calls gives the flows' times") {
    // Two identical jobs on a DGX H100 SuperPOD (TP 8 fills a node; NVSwitch links carry no p2p
    // or DP traffic), PP 2 over two nodes, 1F1B, TP collectives with and without overlap: one
    // replays repeated calls as their first call's duration, the other simulates every call as
    // flows. Same iteration and breakdown. On the test platform, where a GPU's one link carries
    // TP, p2p and NIC traffic alike, the replay is refused and every call is flows.
    auto engine = create_engine({NetworkMode::kIdeal});
    BuildOptions options;
    options.nodes = 4;
    options.network = NetworkMode::kIdeal;
    auto platform = build_platform(*engine, platforms::load_platform("dgx-h100-superpod"), options);
    std::vector<std::unique_ptr<PipelineJob>> jobs;
    for (const bool memo : {true, false}) {
      PipelineJobSpec s;
      s.name = memo ? "memo" : "flows";
      s.memoize_private = memo;
      s.parallel.tp = 8;
      s.parallel.pp = 2;
      s.parallel.global_batch = 4;
      s.parallel.overlap_tp_comm = true;
      for (int c = 0; c < 2; ++c) {
        PricedChunk pc;
        models::LlmComm a{"ar", models::CommGroup::kTp, models::CommKind::kAllReduce, 300e6, 1,
                          false};
        models::LlmComm b{"rs", models::CommGroup::kTp, models::CommKind::kReduceScatter, 200e6, 1,
                          true};
        pc.forward = {{1e-3, {a}}, {2e-3, {b}}, {0.5e-3, {}}};
        pc.backward = {{2e-3, {b}}, {1e-3, {a}}};
        pc.send_forward_bytes = pc.send_backward_bytes = 500e6;
        s.chunks.push_back(pc);
      }
      s.nodes = memo ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
      s.gpus_per_node = 8;
      jobs.push_back(std::make_unique<PipelineJob>(*platform, s));
    }
    engine->run();
    const PipelineResult a = jobs[0]->result(), b = jobs[1]->result();
    INFO("replayed " << a.iteration_time_s << " s, flows " << b.iteration_time_s << " s");
    CHECK(a.iteration_time_s == doctest::Approx(b.iteration_time_s).epsilon(1e-9));
    for (std::size_t st = 0; st < 2; ++st) {
      CHECK(a.stages[st].exposed_tp_s == doctest::Approx(b.stages[st].exposed_tp_s).epsilon(1e-9));
      CHECK(a.stages[st].exposed_pp_s == doctest::Approx(b.stages[st].exposed_pp_s).epsilon(1e-9));
    }
    CHECK(a.stages[0].exposed_tp_s > 0.0);
    CHECK(a.bytes_per_iteration.at("tp") == doctest::Approx(b.bytes_per_iteration.at("tp")));
  }

  TEST_CASE("pipeline: ZeRO-1 parameter gathers overlap the next forward, segment by segment") {
    // Two DP replicas on two nodes; after the optimizer the updated parameters are all-gathered
    // (full 400 MB: 200 MB per GPU over a 12.5 GB/s NIC = 16 ms). With param_gather overlap the
    // gather goes in 4 pieces, one per forward segment (10 ms each): only the first (4 ms) is
    // waited for. Without it, all 16 ms at the end of the iteration.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps = no_latency(4, 1);
    TestPlatform platform(ps);
    std::vector<std::unique_ptr<PipelineJob>> jobs;
    for (const bool overlap : {true, false}) {
      PipelineJobSpec s;
      s.name = overlap ? "overlap" : "after";
      s.parallel.dp = 2;
      s.parallel.global_batch = 2;
      s.parallel.zero_stage = 1;
      s.parallel.overlap_param_gather = overlap;
      PricedChunk pc;
      for (int k = 0; k < 4; ++k) pc.forward.push_back({10e-3, {}});
      pc.backward.push_back({10e-3, {}});
      models::LlmComm ag{"param_ag", models::CommGroup::kDp, models::CommKind::kAllGather, 200e6, 1,
                         true};
      ag.full_bytes = 400e6;
      pc.dp_comms.push_back(ag);
      s.chunks.push_back(pc);
      s.nodes = overlap ? std::vector<int>{0, 1} : std::vector<int>{2, 3};
      s.warmup = 1;
      s.iterations = 1;
      jobs.push_back(std::make_unique<PipelineJob>(platform, s));
    }
    engine->run();
    const double ag_s = 200e6 / ps.nic_bw;
    for (const bool overlap : {true, false}) {
      const PipelineResult r = jobs[overlap ? 0 : 1]->result();
      const double expected = overlap ? ag_s / 4 : ag_s;
      INFO("overlap " << overlap << ": exposed DP expected " << expected << " s, actual "
                      << r.stages[0].exposed_dp_s);
      CHECK(r.stages[0].exposed_dp_s == doctest::Approx(expected).epsilon(1e-6));
      CHECK(r.iteration_time_s == doctest::Approx(50e-3 + expected).epsilon(1e-6));
    }
  }
  TEST_CASE("pipeline: pipelined FSDP gathers before the first forward, reduces after the last") {
    // Two DP replicas on two nodes, 3 micro-batches of a chunk with two 10 ms forward and two
    // 10 ms backward segments; parameters 400 MB whole (a gather: 200 MB per GPU, 16 ms over a
    // 12.5 GB/s NIC), gradients 400 MB (a reduce-scatter: 200 MB per GPU, 16 ms), both cut in
    // two pieces by segment. With overlap.dp on and overlap.param_gather off:
    // - ZeRO 3 under a pipeline (pipelined_fsdp): the gather once, before the first micro-batch's
    //   forward segments (8 ms before each), the reduction once, both pieces after the last
    //   backward: 16 + 16 ms exposed.
    // - ZeRO 1/2 (neither flag): the gather after the optimizer, 16 ms; the first reduction piece
    //   runs under the last backward's second segment, the second is exposed: 16 + 8 ms.
    // - ZeRO 3 at pp 1 (per_micro_batch, both overlaps off): 3 gathers and 3 reductions, 96 ms.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps = no_latency(6, 1);
    TestPlatform platform(ps);
    enum Kind { kPipelined, kPerIteration, kPerMicroBatch };
    std::vector<std::unique_ptr<PipelineJob>> jobs;
    for (const Kind kind : {kPipelined, kPerIteration, kPerMicroBatch}) {
      PipelineJobSpec s;
      s.name = "job" + std::to_string(kind);
      s.parallel.dp = 2;
      s.parallel.micro_batch = 1;
      s.parallel.global_batch = 6;
      s.parallel.zero_stage = kind == kPerIteration ? 1 : 3;
      s.parallel.overlap_param_gather = false;
      s.parallel.overlap_dp_comm = kind != kPerMicroBatch;
      PricedChunk pc;
      pc.forward = {{10e-3, {}}, {10e-3, {}}};
      pc.backward = {{10e-3, {}}, {10e-3, {}}};
      // 400 MB whole either way: the gather's input is the 200 MB shard.
      const auto dp = [](const char* name, models::CommKind ck, double bytes) {
        models::LlmComm x{name, models::CommGroup::kDp, ck, bytes, 1, false};
        x.full_bytes = 400e6;
        return x;
      };
      models::LlmComm ag = dp("param_allgather.forward", models::CommKind::kAllGather, 200e6);
      models::LlmComm rs = dp("grad_reducescatter", models::CommKind::kReduceScatter, 400e6);
      for (models::LlmComm* x : {&ag, &rs}) {
        x->pipelined_fsdp = kind == kPipelined;
        x->per_micro_batch = kind == kPerMicroBatch;
      }
      pc.dp_comms = {ag, rs};
      s.chunks.push_back(pc);
      s.nodes = {2 * kind, 2 * kind + 1};
      s.warmup = 1;
      s.iterations = 1;
      jobs.push_back(std::make_unique<PipelineJob>(platform, s));
    }
    engine->run();
    const double each_s = 200e6 / ps.nic_bw;  // one whole gather or reduction
    const double compute_s = 3 * (20e-3 + 20e-3);
    for (const Kind kind : {kPipelined, kPerIteration, kPerMicroBatch}) {
      const PipelineResult r = jobs[static_cast<std::size_t>(kind)]->result();
      const double expected = kind == kPipelined      ? 2 * each_s
                              : kind == kPerIteration ? 1.5 * each_s
                                                      : 6 * each_s;
      INFO("kind " << kind << ": exposed DP expected " << expected << " s, actual "
                   << r.stages[0].exposed_dp_s);
      CHECK(r.stages[0].exposed_dp_s == doctest::Approx(expected).epsilon(1e-6));
      CHECK(r.iteration_time_s == doctest::Approx(compute_s + expected).epsilon(1e-6));
    }
  }
}
