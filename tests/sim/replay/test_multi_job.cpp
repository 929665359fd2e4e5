// Several jobs in one simulation (sim/multi_job.hpp) on small platforms built in the test (ideal
// network), against closed forms: jobs sharing one bottleneck link each get half of it, jobs on
// disjoint nodes and links are not slowed at all, a later start does not change a job alone,
// and an I/O neighbour reads at its rate or at what the file system gives.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <stdexcept>

#include "common/config_error.hpp"
#include "sim/engine_setup.hpp"
#include "sim/input_pipeline.hpp"
#include "sim/multi_job.hpp"
#include "sim/pipeline_job.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;

namespace {

// Four nodes and a PFS of two servers whose disks read 2 GB/s each.
TestPlatformSpec two_server_pfs() {
  TestPlatformSpec ps;
  ps.nodes = 4;
  ps.pfs_servers = 2;
  ps.pfs_disk_bw = 2e9;
  return ps;
}

IoJobSpec io_job(const std::string& name, std::vector<int> nodes, double rate_Bps,
                 double request_bytes, double start_s, double duration_s) {
  IoJobSpec j;
  j.name = name;
  j.nodes = std::move(nodes);
  j.read_rate_Bps = rate_Bps;
  j.request_bytes = request_bytes;
  j.start_s = start_s;
  j.duration_s = duration_s;
  return j;
}

// All-reduce bound: 10 ms of forward compute, one gradient of `bytes` made by a backward op of
// no duration, 1 ms of optimizer; one GPU per node, ring at flow fidelity.
JobSpec ring_job(const std::string& name, std::vector<int> nodes, double bytes) {
  JobSpec s;
  s.name = name;
  s.nodes = std::move(nodes);
  s.gpus_per_node = 1;
  s.program = synthetic_program(1, 10e-3, 1, 0.0, bytes, 1e-3);
  s.program.input_bytes = 0.0;
  s.allreduce.algorithm = Algorithm::kRing;
  s.allreduce.fusion_bytes = 1e12;
  s.fidelity = Fidelity::kFlow;
  s.warmup = 1;
  s.iterations = 3;
  return s;
}

constexpr double kBytes = 256.0 * 1024 * 1024;

// Two backbones: routes between nodes below `split` cross backbone 0, the others backbone 1;
// each as fast as a NIC, so a backbone two jobs share is their bottleneck.
TestPlatformSpec two_backbones(int nodes, int split) {
  TestPlatformSpec ps;
  ps.nodes = nodes;
  ps.backbones = 2;
  ps.backbone_bw = ps.nic_bw;
  ps.backbone = [split](int a, int b) { return std::max(a, b) < split ? 0 : 1; };
  return ps;
}

// The LLM (pipeline) job's twin of ring_job: pp 1 and dp 2 on `nodes`, one micro-batch of 4 ms
// forward and 6 ms backward, then a gradient all-reduce of `bytes` (not overlapped) and 1 ms of
// optimizer, so its iteration has the same closed form as ring_job's.
PipelineJobSpec llm_job(const std::string& name, std::vector<int> nodes, double bytes) {
  PipelineJobSpec s;
  s.name = name;
  s.parallel.pp = 1;
  s.parallel.dp = 2;
  s.parallel.micro_batch = 1;
  s.parallel.global_batch = 2;
  s.parallel.overlap_dp_comm = false;
  PricedChunk pc;
  pc.forward.push_back({4e-3, {}});
  pc.backward.push_back({6e-3, {}});
  pc.dp_comms.push_back({"grad_ar", scalecast::models::CommGroup::kDp,
                         scalecast::models::CommKind::kAllReduce, bytes, 1, false});
  pc.optimizer_s = 1e-3;
  s.chunks.push_back(pc);
  s.nodes = std::move(nodes);
  s.gpus_per_node = 1;
  s.warmup = 1;
  s.iterations = 3;
  return s;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("two all-reduce-bound jobs sharing one bottleneck link each see the comm part double") {
    auto engine = create_engine({NetworkMode::kIdeal});
    // Nodes 0-1 and 2-3 talk over backbone 0 (shared by jobs a and b); 4-5 over backbone 1.
    const TestPlatformSpec ps = two_backbones(6, 4);
    TestPlatform platform(ps);
    JobMix mix(platform, {{ring_job("a", {0, 1}, kBytes), 0.0},
                          {ring_job("b", {2, 3}, kBytes), 0.0},
                          {ring_job("alone", {4, 5}, kBytes), 0.0}});
    mix.run();
    const std::vector<JobResult> r = mix.results();
    REQUIRE(r.size() == 3);
    // 2-rank ring: S/B + 2 alpha; a and b get B/2 of the backbone each, so S/B doubles.
    const double alpha = 2 * ps.gpu_link_lat_s + 2 * ps.nic_lat_s;
    const double fixed = 10e-3 + 1e-3;
    const double alone = fixed + ring_allreduce_s(2, kBytes, ps.nic_bw, alpha);
    const double shared = fixed + ring_allreduce_s(2, kBytes, ps.nic_bw / 2, alpha);
    const double slowdown = shared / alone;
    for (int k : {0, 1}) {
      INFO(r[k].name << ": expected " << shared << " s, actual " << r[k].iteration_time_s << " s");
      CHECK(r[k].iteration_time_s == doctest::Approx(shared).epsilon(1e-6).scale(0.0));
      const double measured = r[k].iteration_time_s / r[2].iteration_time_s;
      MESSAGE(r[k].name << " slowdown: expected " << slowdown << ", actual " << measured);
      CHECK(measured == doctest::Approx(slowdown).epsilon(1e-6).scale(0.0));
    }
    INFO("alone: expected " << alone << " s, actual " << r[2].iteration_time_s << " s");
    CHECK(r[2].iteration_time_s == doctest::Approx(alone).epsilon(1e-6).scale(0.0));
    // The comm part (what is not compute) doubled, to within the route latency.
    CHECK(r[0].comm_total_s == doctest::Approx(2 * kBytes / ps.nic_bw + 2 * alpha).epsilon(1e-6));
  }

  TEST_CASE("an LLM job and a data-parallel job sharing one bottleneck link each see it halved") {
    // Nodes 0-3 talk over backbone 0, 4-7 over backbone 1. Together: the LLM job on 0-1 and the
    // data-parallel job on 2-3, their all-reduces at the same times (same compute before them).
    // Alone: the LLM job's twin on 4-5 and the data-parallel job's on 6-7, one on each backbone.
    auto engine = create_engine({NetworkMode::kIdeal});
    const TestPlatformSpec ps = two_backbones(8, 4);
    TestPlatform platform(ps);
    JobMix mix(
        platform, {{ring_job("dp", {2, 3}, kBytes), 0.0}}, {},
        {{llm_job("llm", {0, 1}, kBytes), 0.0}, {llm_job("llm-alone", {4, 5}, kBytes), 0.0}});
    mix.run();
    const std::vector<JobResult> dp = mix.results();
    const std::vector<PipelineResult> llm = mix.pipeline_results();
    REQUIRE(dp.size() == 1);
    REQUIRE(llm.size() == 2);
    const double alpha = 2 * ps.gpu_link_lat_s + 2 * ps.nic_lat_s;
    const double alone = 11e-3 + ring_allreduce_s(2, kBytes, ps.nic_bw, alpha);
    const double shared = 11e-3 + ring_allreduce_s(2, kBytes, ps.nic_bw / 2, alpha);
    MESSAGE("llm: alone " << llm[1].iteration_time_s << " s (closed form " << alone << "), shared "
                          << llm[0].iteration_time_s << " s (closed form " << shared
                          << "); dp shared " << dp[0].iteration_time_s << " s");
    CHECK(llm[1].iteration_time_s == doctest::Approx(alone).epsilon(1e-4));
    CHECK(llm[0].iteration_time_s == doctest::Approx(shared).epsilon(1e-4));
    CHECK(dp[0].iteration_time_s == doctest::Approx(shared).epsilon(1e-4));
    // The LLM job's wait at its all-reduce is what grew.
    CHECK(llm[0].stages[0].exposed_dp_s - llm[1].stages[0].exposed_dp_s ==
          doctest::Approx(shared - alone).epsilon(1e-3));
  }

  TEST_CASE("an LLM job started late starts its iterations late and is not slowed on its own") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 4;
    ps.backbones = 1;
    ps.backbone_bw = ps.nic_bw;
    ps.backbone = [](int, int) { return 0; };
    TestPlatform platform(ps);
    JobMix mix(platform, {{ring_job("first", {0, 1}, kBytes), 0.0}}, {},
               {{llm_job("late", {2, 3}, kBytes), 5.0}});
    mix.run();
    const PipelineResult late = mix.pipeline_results().at(0);
    const double alpha = 2 * ps.gpu_link_lat_s + 2 * ps.nic_lat_s;
    const double alone = 11e-3 + ring_allreduce_s(2, kBytes, ps.nic_bw, alpha);
    // Warm-up and measured iterations counted from its start, not from time 0.
    CHECK(late.iteration_time_s == doctest::Approx(alone).epsilon(1e-4));
    REQUIRE(!late.intervals.empty());
    CHECK(late.intervals.front().start_s > 5.0);
  }

  TEST_CASE("two LLM jobs named a and a.r1 keep their pipeline messages apart") {
    // Job a simulates both its DP replicas (compute noise), each with its own p2p mailboxes; job
    // b is its twin on other nodes. Before, job a's replica 1 and job a.r1's replica 0 shared
    // their mailboxes ("a.r1.c0.f"), so activations crossed between the jobs.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(no_latency(12, 1));
    const auto pipeline = [](const std::string& name, int first, bool noisy) {
      PipelineJobSpec s = llm_job(name, {first, first + 1, first + 2, first + 3}, 1e6);
      s.parallel.pp = 2;
      s.parallel.global_batch = 8;  // 4 micro-batches per pipeline
      s.chunks.push_back(s.chunks.front());
      for (PricedChunk& c : s.chunks) c.send_forward_bytes = c.send_backward_bytes = 64e6;
      if (noisy) s.variability = {0.2, 0.0, 1.0, 5};
      return s;
    };
    JobMix mix(platform, {}, {},
               {{pipeline("a", 0, true), 0.0},
                {pipeline("a.r1", 4, false), 0.0},
                {pipeline("b", 8, true), 0.0}});
    mix.run();
    const std::vector<PipelineResult> r = mix.pipeline_results();
    REQUIRE(r.size() == 3);
    CHECK(r[0].replicas_simulated == 2);
    CHECK(r[1].replicas_simulated == 1);
    CHECK(r[0].iteration_times_s == r[2].iteration_times_s);
    CHECK(r[0].iteration_time_s > r[1].iteration_time_s);  // the noise's slowest rank paces a
  }

  TEST_CASE("jobs on disjoint nodes and links are not slowed: slowdown 1.000") {
    auto engine = create_engine({NetworkMode::kIdeal});
    const TestPlatformSpec ps = two_backbones(4, 2);
    TestPlatform platform(ps);
    JobMix mix(platform,
               {{ring_job("a", {0, 1}, kBytes), 0.0}, {ring_job("b", {2, 3}, kBytes), 0.0}});
    mix.run();
    const double alpha = 2 * ps.gpu_link_lat_s + 2 * ps.nic_lat_s;
    const double alone = 11e-3 + ring_allreduce_s(2, kBytes, ps.nic_bw, alpha);
    for (const JobResult& r : mix.results()) {
      MESSAGE(r.name << " slowdown: expected 1.000, actual " << r.iteration_time_s / alone);
      CHECK(r.iteration_time_s / alone == doctest::Approx(1.0).epsilon(1e-9).scale(0.0));
    }
  }

  TEST_CASE("a job started after the other is done shares nothing and its iterations start late") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 4;
    ps.backbones = 1;
    ps.backbone_bw = ps.nic_bw;
    ps.backbone = [](int, int) { return 0; };  // every inter-node route crosses one backbone
    TestPlatform platform(ps);
    JobMix mix(platform,
               {{ring_job("first", {0, 1}, kBytes), 0.0}, {ring_job("late", {2, 3}, kBytes), 5.0}});
    mix.run();
    const std::vector<JobResult> r = mix.results();
    const double alpha = 2 * ps.gpu_link_lat_s + 2 * ps.nic_lat_s;
    const double alone = 11e-3 + ring_allreduce_s(2, kBytes, ps.nic_bw, alpha);
    CHECK(4 * alone < 5.0);  // the first job (warm-up + 3) is done before the second starts
    for (const JobResult& j : r)
      CHECK(j.iteration_time_s == doctest::Approx(alone).epsilon(1e-9).scale(0.0));
    REQUIRE(!r[1].iterations.empty());
    CHECK(r[1].iterations.front().start_s == doctest::Approx(5.0 + alone).epsilon(1e-9));
  }

  TEST_CASE("two jobs that overlap only partly are slowed less than two that overlap fully") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 4;
    ps.backbones = 1;
    ps.backbone_bw = ps.nic_bw;
    ps.backbone = [](int, int) { return 0; };
    TestPlatform platform(ps);
    const double alpha = 2 * ps.gpu_link_lat_s + 2 * ps.nic_lat_s;
    const double alone = 11e-3 + ring_allreduce_s(2, kBytes, ps.nic_bw, alpha);
    const double shared = 11e-3 + ring_allreduce_s(2, kBytes, ps.nic_bw / 2, alpha);
    JobMix mix(platform, {{ring_job("first", {0, 1}, kBytes), 0.0},
                          {ring_job("late", {2, 3}, kBytes), 2.5 * alone}});
    mix.run();
    for (const JobResult& j : mix.results()) {
      MESSAGE(j.name << ": alone " << alone << " s, fully shared " << shared << ", actual "
                     << j.iteration_time_s);
      CHECK(j.iteration_time_s > alone * 1.01);
      CHECK(j.iteration_time_s < shared * 0.99);
    }
  }

  TEST_CASE("an I/O neighbour reads at its rate, or at what the file system gives") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 4;
    ps.pfs_servers = 2;
    ps.pfs_disk_bw = 2e9;  // 4 GB/s over both servers
    TestPlatform platform(ps);
    // Asks 1 GB/s for 2 s: 10 MB per node every 20 ms, 100 requests per node.
    IoJobSpec paced = io_job("paced", {0, 1}, 1e9, 10e6, 0.0, 2.0);
    IoJobSpec greedy = io_job("greedy", {2, 3}, 100e9, 16e6, 2.0, 2.0);  // asks 100 GB/s, later
    JobMix mix(platform, {}, {paced, greedy});
    mix.run();
    const std::vector<IoJobResult> r = mix.io_results();
    REQUIRE(r.size() == 2);
    MESSAGE("paced: asked 1 GB/s, got " << r[0].achieved_rate_Bps / 1e9 << " GB/s");
    CHECK(r[0].bytes_read == doctest::Approx(2 * 100 * 10e6).epsilon(1e-12));
    CHECK(r[0].achieved_rate_Bps == doctest::Approx(1e9).epsilon(1e-9));
    MESSAGE("greedy: asked 100 GB/s, got " << r[1].achieved_rate_Bps / 1e9 << " GB/s of 4");
    // Back to back: 16 MB requests on two 2 GB/s disks, the window cut at 2 s.
    CHECK(r[1].achieved_rate_Bps == doctest::Approx(4e9).epsilon(0.01));
  }

  TEST_CASE("an I/O job without a duration never reads more than it asked by the window's end") {
    // Its window ends with the training job's 4 iterations (~44 ms). Asking 0.2 GB/s in
    // requests of 2 MB, a request is due every 10 ms once the rate has asked for it (10, 20, 30,
    // 40 ms; each read takes 1 ms on a 2 GB/s disk): 4 requests, 8 MB of the 8.8 MB asked. A
    // request at the window's start read 10 MB, more than asked; at 1 B/s no request is ever
    // asked for, where one of 16 MB was read.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(two_server_pfs());
    IoJobSpec paced = io_job("paced", {2}, 0.2e9, 2e6, 0.0, 0.0);
    IoJobSpec trickle = io_job("trickle", {3}, 1.0, 16.0 * 1048576, 0.0, 0.0);
    JobMix mix(platform, {{ring_job("train", {0, 1}, 1e6), 0.0}}, {paced, trickle});
    mix.run();
    const std::vector<IoJobResult> r = mix.io_results();
    REQUIRE(r.size() == 2);
    const double window = r[0].end_s - r[0].start_s;
    const double asked = paced.read_rate_Bps * window;
    MESSAGE("paced: window " << window << " s, asked " << asked << " B, read " << r[0].bytes_read);
    REQUIRE(window > 0.041);
    REQUIRE(window < 0.05);
    CHECK(r[0].bytes_read <= asked);
    CHECK(r[0].bytes_read == doctest::Approx(4 * 2e6).epsilon(1e-12));
    CHECK(r[0].achieved_rate_Bps <= paced.read_rate_Bps);
    CHECK(r[1].bytes_read == 0.0);
    CHECK(r[1].achieved_rate_Bps == 0.0);
  }

  TEST_CASE("an I/O job without a duration that reaches its request limit is an error at its key") {
    // A neighbour reading until the training jobs end has no window known at load; its
    // requests cost SimGrid more the more came before (1e6 s of 16 MiB requests at 20 GB/s never
    // ended), so the engine stops at the limit with an error at the job, never a read cut short.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(two_server_pfs());
    IoJobSpec io = io_job("io", {2, 3}, 0.2e9, 2e6, 0.0, 0.0);
    io.file = "mix.yaml";
    io.line = 12;
    io.column = 5;
    io.key = "jobs[1]";
    // 1 per node: requests are due every 20 ms per node (at 20, 40, ... ms) and the training job
    // ends at ~44 ms, so the second is due inside the window.
    io.max_requests = 2;
    JobMix mix(platform, {{ring_job("train", {0, 1}, 1e6), 0.0}}, {io});
    try {
      mix.run();
      FAIL("expected an error at the I/O job");
    } catch (const scalecast::common::ConfigError& e) {
      CHECK(std::string(e.what()) ==
            "mix.yaml:12:5: error: jobs[1]: the I/O job 'io' reached 2 requests of 1.907 MiB at "
            "0.04 s, before the training jobs ended; that is the most scalecast simulates per "
            "I/O job (give it a duration, a larger request_size or a lower read_rate)");
    }
  }

  TEST_CASE("a noisy neighbour on other nodes halves an I/O-bound job's share of the PFS") {
    // The PFS aggregate link (4 GB/s) is the bottleneck: alone, 8 nodes x 2 GPUs x 32 samples x
    // 2 MB = 1,024 MB per batch take 256 ms (test_input_storage.cpp). An I/O job on 8 other
    // nodes reading back to back adds 8 flows to the 8 readers of the training job: each gets
    // 1/16 of the link, the training job half of it, so its iteration doubles to 512 ms.
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 16;
    ps.gpus = 2;
    ps.pfs_servers = 3;
    ps.pfs_aggregate_bw = 4e9;
    ps.pfs_disk_bw = 1e12;
    TestPlatform platform(ps);
    JobSpec s;
    s.name = "train";
    for (int n = 0; n < 8; ++n) s.nodes.push_back(n);
    s.gpus_per_node = ps.gpus;
    s.program = synthetic_program(8, 1e-3, 16, 2e-3, 1e6, 1e-3, 32);
    s.program.input_bytes = 32 * 1e5;
    s.allreduce.algorithm = Algorithm::kHierarchical;
    s.allreduce.fusion_bytes = 1e12;
    s.fidelity = Fidelity::kWave;
    s.nic_groups = {0, 0};
    s.symmetric = false;
    s.warmup = 3;
    s.iterations = 2;
    s.input.source = InputSource::kPfs;
    s.input.stored_bytes_per_sample = 2e6;
    IoJobSpec noise = io_job("noise", {8, 9, 10, 11, 12, 13, 14, 15}, 1e12, 16e6, 0.0, 0.0);
    JobMix mix(platform, {{s, 0.0}}, {noise});
    mix.run();
    const JobResult r = mix.results().front();
    const double alone = 16 * 32 * 2e6 / 4e9;
    MESSAGE("iteration alone " << alone << " s (closed form), with the neighbour expected "
                               << 2 * alone << " s, actual " << r.iteration_time_s << " s");
    CHECK(r.iteration_time_s == doctest::Approx(2 * alone).epsilon(0.01));
    const IoJobResult io = mix.io_results().front();
    MESSAGE("neighbour got " << io.achieved_rate_Bps / 1e9 << " GB/s of the 4 GB/s link");
    CHECK(io.achieved_rate_Bps > 1.9e9);  // its half while the job runs, all of it before/after
  }

  TEST_CASE("a mix rejects duplicate names and a negative start") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 4;
    TestPlatform platform(ps);
    CHECK_THROWS_AS(JobMix(platform, {{ring_job("a", {0, 1}, kBytes), 0.0},
                                      {ring_job("a", {2, 3}, kBytes), 0.0}}),
                    std::invalid_argument);
    CHECK_THROWS_AS(JobMix(platform, {{ring_job("a", {0, 1}, kBytes), -1.0}}),
                    std::invalid_argument);
  }
}
