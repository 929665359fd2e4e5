// The staged input pipeline on the test platform (ideal network), against analytic
// expectations: NVMe read-bound with and without prefetch, decode-bound and decode-fast, one NVMe
// shared by a node's GPUs, PFS aggregate sharing with the node-0 shortcut and with every rank
// simulated. Synthetic step: 8 forward ops of 1 ms, 16 backward of 2 ms, optimizer 1 ms, so
// compute T = 41 ms per iteration for a batch of 32.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;

namespace {

constexpr double kComputeS = 8 * 1e-3 + 16 * 2e-3 + 1e-3;  // T
constexpr int kBatch = 32;
constexpr double kStoredBytes = 2e6;        // per sample
constexpr double kH2dBytes = kBatch * 1e5;  // per batch

JobSpec input_job(int nodes, int gpus, InputSource source) {
  JobSpec s;
  for (int n = 0; n < nodes; ++n) s.nodes.push_back(n);
  s.gpus_per_node = gpus;
  s.program = synthetic_program(8, 1e-3, 16, 2e-3, 1e6, 1e-3, kBatch);
  s.program.input_bytes = kH2dBytes;
  s.allreduce.fusion_bytes = 1e12;
  s.warmup = 3;
  s.iterations = 3;
  s.input.source = source;
  if (source != InputSource::kMemory) s.input.stored_bytes_per_sample = kStoredBytes;
  return s;
}

// Copy time of one batch on the test platform's CPU -> GPU link.
double copy_s(const TestPlatformSpec& ps) { return kH2dBytes / ps.h2d_bw + ps.h2d_lat_s; }

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("input: NVMe read-bound on 1 GPU with prefetch stalls by read minus compute") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 1;
    ps.nvme_read_bw = 1e9;
    TestPlatform platform(ps);
    Job job(platform, input_job(1, 1, InputSource::kNvme));
    engine->run();
    const JobResult r = job.result();
    const double read = kBatch * kStoredBytes / ps.nvme_read_bw;  // 64 ms
    const double c = copy_s(ps);
    MESSAGE("read " << read << " s, compute " << kComputeS << " s, copy " << c
                    << " s | iteration expected " << read << " actual " << r.iteration_time_s
                    << "; io_stall expected " << read - kComputeS - c << " (read - compute - copy)"
                    << " actual " << r.breakdown.io_stall_s << "; copy " << r.breakdown.copy_s);
    CHECK(r.iteration_time_s == doctest::Approx(read).epsilon(1e-6));
    // The batch's own copy ends the wait and counts as exposed copy.
    CHECK(r.breakdown.io_stall_s == doctest::Approx(read - kComputeS - c).epsilon(1e-6));
    CHECK(r.breakdown.io_stall_s + r.breakdown.copy_s ==
          doctest::Approx(read - kComputeS).epsilon(1e-6));
    CHECK(r.breakdown.compute_s == doctest::Approx(kComputeS).epsilon(1e-9));
    const Breakdown& b = r.breakdown;
    CHECK(b.compute_s + b.exposed_comm_s + b.io_stall_s + b.copy_s + b.idle_s ==
          doctest::Approx(r.iteration_time_s).epsilon(1e-9));
    CHECK(r.bytes_per_iteration.at("storage") == doctest::Approx(kBatch * kStoredBytes));
    int reads = 0;
    for (const Interval& iv : r.intervals) reads += iv.stream == Stream::kRead;
    CHECK(reads == 6);  // one per batch, warm-up included
  }

  TEST_CASE("input: NVMe without prefetch is read plus copy plus compute") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 1;
    ps.nvme_read_bw = 1e9;
    TestPlatform platform(ps);
    JobSpec spec = input_job(1, 1, InputSource::kNvme);
    spec.input.prefetch_depth = 0;
    Job job(platform, spec);
    engine->run();
    const JobResult r = job.result();
    const double read = kBatch * kStoredBytes / ps.nvme_read_bw;
    const double expected = read + copy_s(ps) + kComputeS;
    MESSAGE("iteration expected " << expected << " s (read + copy + compute), actual "
                                  << r.iteration_time_s << "; io_stall expected " << read
                                  << " actual " << r.breakdown.io_stall_s);
    CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(1e-6));
    CHECK(r.breakdown.io_stall_s == doctest::Approx(read).epsilon(1e-6));
  }

  TEST_CASE("input: decode slower than the GPU stalls it and faster decode does not") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 2;
    TestPlatform platform(ps);
    // GPU sample rate 32 / 41 ms = 780 samples/s. Slow: 100 samples/s x 4 cores = 400/s, decode
    // 80 ms per batch; fast: 100 x 16 = 1,600/s, 20 ms per batch.
    JobSpec slow = input_job(1, 1, InputSource::kMemory);
    slow.name = "slow";
    slow.input.decode_samples_per_s = 100.0;
    slow.input.decode_cores = 4.0;
    JobSpec fast = slow;
    fast.name = "fast";
    fast.nodes = {1};
    fast.input.decode_cores = 16.0;
    Job js(platform, slow), jf(platform, fast);
    engine->run();
    const JobResult rs = js.result(), rf = jf.result();
    const double decode = kBatch / 400.0, c = copy_s(ps);
    MESSAGE("GPU rate " << kBatch / kComputeS
                        << " samples/s; slow decode 400/s: iteration expected " << decode
                        << " actual " << rs.iteration_time_s << ", io_stall expected "
                        << decode - kComputeS - c << " actual " << rs.breakdown.io_stall_s);
    MESSAGE("fast decode 1600/s: iteration expected "
            << kComputeS << " actual " << rf.iteration_time_s << ", io_stall expected 0 actual "
            << rf.breakdown.io_stall_s);
    CHECK(rs.iteration_time_s == doctest::Approx(decode).epsilon(1e-6));
    CHECK(rs.breakdown.io_stall_s == doctest::Approx(decode - kComputeS - c).epsilon(1e-6));
    CHECK(rf.iteration_time_s == doctest::Approx(kComputeS).epsilon(1e-9));
    CHECK(rf.breakdown.io_stall_s == 0.0);
    CHECK(rf.breakdown.copy_s == 0.0);  // the copy ran during the previous step
  }

  TEST_CASE("input: one NVMe shared by a node's GPUs gives each disk bandwidth over GPUs") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatformSpec ps;
    ps.nodes = 1;
    ps.gpus = 4;
    ps.nvme_read_bw = 1e9;
    TestPlatform platform(ps);
    Job job(platform, input_job(1, 4, InputSource::kNvme));
    engine->run();
    const JobResult r = job.result();
    const double per_gpu = kBatch * kStoredBytes / r.iteration_time_s;
    MESSAGE("per-GPU read rate expected " << ps.nvme_read_bw / 4 << " B/s (disk / 4 GPUs), actual "
                                          << per_gpu << " B/s; iteration " << r.iteration_time_s
                                          << " s");
    CHECK(per_gpu == doctest::Approx(ps.nvme_read_bw / 4).epsilon(1e-6));
    int concurrent_reads = 0;  // rank 0's and the others' reads of batch 3 overlap in time
    const Interval* first = nullptr;
    for (const Interval& iv : r.intervals)
      if (iv.stream == Stream::kRead && iv.iteration == 3) {
        if (first == nullptr) first = &iv;
        concurrent_reads += iv.start_s < first->end_s && first->start_s < iv.end_s;
      }
    CHECK(concurrent_reads == 4);
  }
}
