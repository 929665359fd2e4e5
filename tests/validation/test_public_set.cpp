// The public validation set through the real engine (label "validation"): every expressible
// point is simulated with `scalecast run` child processes, and the run fails when the NCCL
// data-parallel points' MAPE exceeds the current target or one of them is off by more than 25%,
// when the host-exchange group (parameter servers, MPI on the CPU, TCP) leaves its measured
// state (guards and the exact set of points beyond +-25%), when any simulation fails
// unexpectedly, or when the set of skipped points (with their reasons) differs from the one
// below: a gate that cannot shrink by skipping more.

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "validation/protocol.hpp"
#include "validation/report.hpp"
#include "validation/run_predictor.hpp"
#include "validation/sim_server.hpp"
#include "validation/statistics.hpp"

using namespace scalecast::validation;

namespace {

// For the NCCL data-parallel points (every point but the host-exchange group below), the
// issue's "now" target was MAPE <= 10%, no point beyond +-25% (14:35 UTC 2 Dec run, with
// the per-kernel overhead: MAPE 7.60% over 36 points, max |e| 20.09% at D2-2.g16; 3 Dec, 14:05
// UTC: MAPE 7.17% over 41 points, max 20.09%, 15 skipped as listed below). 3 Dec, with NCCL's
// tuning model on by default and the double binary tree: MAPE 7.26% over 41 points, max 20.07%
// (D2-2.g16). 4 Dec: the DGX-2H BERT points (D2-10, D2-11) carry their source's gradient
// accumulation and exchange (FORMAT.md section 7): MAPE 6.86%, max 20.07%. 5 Dec: the 32 GB V100
// systems (DGX-1 32 GB, DGX-2, DGX-2H) are priced by the V100 SXM2 kernel data (same silicon and
// clocks, platforms/gpus.yaml calibration_key) instead of the datasheet alone: MAPE 6.86 ->
// 7.005% (D2-5 +12.5 -> +14.7%, D2-8 +16.0 -> +18.2%; a correction, raised here on purpose, not
// to pass). 6 Dec: a multi-node NCCL ring bucket moves NCCL's flat-ring volume through the NICs,
// 2(P-1)/P of the bucket instead of the node ring's 2(N-1)/N (sim/job_collectives.cpp
// plan_bucket): MAPE 7.005 -> 6.687% (PA-6.hvd-nccl-rdma.vgg16 +9.5 -> +1.9%, CL-1.g16 +14.9 ->
// +11.7%, D1-13.n4 +3.2 -> -0.5%, D1-12.n4 -2.7 -> -6.3%), max unchanged. 6 Dec (later): a
// measured-tier conv or GEMM takes at most k times its 1/k piece (calibration/README.md
// "Splitting bound"), which the V100 fit extrapolated from DeepBench's N = 8 and 16 rows broke:
// MAPE 6.687 -> 6.452% (D2-5 +14.7 -> +10.0%, D2-8 +18.2 -> +13.4%). 7 Dec: platforms state
// whether their NICs carry RDMA (platforms/README.md nics.rdma); AWS p3.16xlarge's do not, so its
// multi-node points run NCCL over its socket transport at 0.53 of the NIC's rate
// (sim/transport.hpp): MAPE 6.452 -> 6.140% (CL-1.g16 +11.7 -> +6.2%, CL-1.g32 +3.2 -> -2.0%,
// CL-1.g64 +18.4 -> +12.3%). 7 Dec (later), raised on purpose by a correction of the collective
// itself, not to pass: an intra-node ring follows the NVLink mesh (sim/intra_rings.hpp). A
// DGX-1V's all-reduce ran over a ring in GPU order that crosses PCIe and QPI twice, 15.7 GB/s bus
// bandwidth; now 134 (134.5 measured [vTrain]; tests/sim/replay/test_collective_busbw.cpp). Every
// DGX-1-class point has less exposed communication: MAPE 6.140 -> 7.232% (D1-12.n4 -6.3 ->
// +10.7%, D1-12.n16 -10.7 -> +12.0%, D1-14.amp.g8 +0.4 -> +8.4%), max unchanged (D2-2.g16).
// Then, again on purpose: one NCCL call's intra- and inter-node stages run at once
// (sim/job_collectives.cpp pipelined_hierarchical), not one after the other: two DGX A100 moved
// 105 GB/s, now 184 (192 measured [nccl#1576]); two DGX-1V 47.5 (48 [nccl-tests#29]). Every
// multi-node NCCL point has less exposed communication: MAPE 7.232 -> 8.002% (D1-12.n4 +10.7 ->
// +11.5%, D2-8 +13.4 -> +15.4%, H-3 -4.5 -> -1.7%, CL-1.g16 +7.1 -> +12.9%), max unchanged. What
// the slow collective hid is named in validation/README.md ("Collectives corrected, 7 Dec").
// 8 Dec: a collective's NCCL channels hold SMs, so the backward pass it overlaps runs slower
// (sim/README.md "Collectives hold SMs"): MAPE 8.002 -> 7.846 %, every moved point toward its
// measurement (D1-12.n16 +13.0 -> +12.3 %, D1-14.fp32.g8 +8.1 -> +7.3 %).
// Guards at that state; the goal is 5%, no point beyond 15%: lower these as the model improves,
// never raise them to pass (validation/README.md).
constexpr double kTargetMapePct = 7.85;
constexpr double kMaxAbsPct = 20.5;
// The host-exchange group: the 15 PA-6 points of the Horovod 2017 table (uber-pascal-roce25)
// that run TensorFlow parameter servers over gRPC/TCP, Horovod's MPI all-reduce on the CPU, or
// NCCL over TCP. Issue 16 requires each of them within +-25 % and the overall MAPE at the
// data-parallel target; that is NOT met. The model's host-side costs come from cited
// measurements only (sim/README.md "Parameter servers", "MPI on the CPU", "Transports"), never
// from these points. 3 Dec 2026, after mpi_cpu's one-core rate and fusion-buffer copies: MAPE
// 61.32 %, max |e| 268.09 % (PA-6.ps.vgg16). Then each TensorFlow process's one gRPC polling
// thread, taking received tensors out at the measured 0.9 GB/s (sim/parameter_server.hpp
// kTfGrpcReceiveBps): the parameter-server points went from +9..+268 % to -39..+45 % (small
// tensors now too slow, VGG-16's 411 MB fc6 still too fast: the measured rate falls above
// 128 MB, not modelled), MAPE 33.76 %, max 99.42 % (PA-6.hvd-mpi-tcp.vgg16; unchanged by the TCP
// stream rate's 42 -> 42.2 Gbit/s). The worker on the GPU that holds a task's variables is
// another process, so its tensors also pass the task's gRPC thread: MAPE 33.76 -> 33.87 %
// (ps.inception_v3 -13.3 -> -14.9 %; a correction, raised here on purpose, not to pass). 4 Dec:
// the variables are placed greedily by bytes, as tf_cnn_benchmarks' distributed PS mode does
// (not round-robin): ps.resnet101 -26.1 -> -18.2 % (now within +-25 %), ps-cpu.resnet101 -39.4 ->
// -34.5 %, ps(-cpu).inception_v3 -14.9/-27.9 -> -12.0/-25.6 %, VGG-16 unchanged (fc6 alone on one
// task either way); MAPE 33.87 -> 32.80 %, and exactly the points below beyond +-25 %. A point that
// improves into +-25 % or regresses out of it fails the test: update the set (and lower the guards)
// in the change that explains why; never raise them to pass. 6 Dec: NCCL's flat-ring volume per
// NIC (above) moves the NCCL-over-TCP points (nccl-tcp.vgg16 +49.6 -> +39.2 %): MAPE 32.80 ->
// 31.97 %, the same points beyond +-25 %. The splitting bound (above) moves the P100 points by
// at most 0.65 points: MAPE 31.965 -> 31.997 %, the same points beyond +-25 %. 7 Dec: NCCL over
// TCP moves 0.53 of a NIC's rate, the measured share of NCCL's socket transport (sim/transport.hpp
// kNcclSocketLinkFraction, two nccl-tests reports): nccl-tcp +1.1 / +6.9 / +39.0 % -> -3.5 / +2.4 /
// -8.8 % (inception_v3 / resnet101 / vgg16), MAPE 31.997 -> 29.85 %, nccl-tcp.vgg16 now within.
// 7 Dec (later): a TensorFlow process takes a tensor of 128 MB or more out of gRPC at the rate
// measured for 128 MB messages, 0.545 GB/s, not 0.9 (sim/parameter_server.hpp
// kTfGrpcReceiveLargeBps, [TF-issue6256]); only VGG-16's 411 MB fc6 is that large:
// ps.vgg16 +45.07 -> +2.87 %, ps-cpu.vgg16 +35.88 -> -3.70 % (both now within), MAPE 29.85 ->
// 24.89 %. 7 Dec (later): the collective corrections above move the NCCL-over-TCP points
// (nccl-tcp -3.5 / +2.4 / -8.8 % -> +0.1 / +5.7 / -1.9 %): MAPE 24.89 -> 24.42 %, the same points
// beyond +-25 %. 8 Dec: NCCL's SMs slow the compute under the NCCL-over-TCP points' buckets
// (nccl-tcp.inception_v3 +0.08 -> -0.07 %, resnet101 +5.7 -> +5.4 %): MAPE 24.42 -> 24.40 %.
const std::set<std::string> kHostExchangePoints = {
    "PA-6.ps.inception_v3",           "PA-6.ps.resnet101",           "PA-6.ps.vgg16",
    "PA-6.ps-cpu.inception_v3",       "PA-6.ps-cpu.resnet101",       "PA-6.ps-cpu.vgg16",
    "PA-6.hvd-mpi-tcp.inception_v3",  "PA-6.hvd-mpi-tcp.resnet101",  "PA-6.hvd-mpi-tcp.vgg16",
    "PA-6.hvd-mpi-rdma.inception_v3", "PA-6.hvd-mpi-rdma.resnet101", "PA-6.hvd-mpi-rdma.vgg16",
    "PA-6.hvd-nccl-tcp.inception_v3", "PA-6.hvd-nccl-tcp.resnet101", "PA-6.hvd-nccl-tcp.vgg16",
};
constexpr double kHostExchangeMapePct = 24.41;
constexpr double kHostExchangeMaxAbsPct = 99.5;
const std::set<std::string> kHostExchangeBeyond25 = {
    "PA-6.ps-cpu.inception_v3", "PA-6.ps-cpu.resnet101",   "PA-6.hvd-mpi-tcp.resnet101",
    "PA-6.hvd-mpi-tcp.vgg16",   "PA-6.hvd-mpi-rdma.vgg16",
};

// validation/mlperf-scale.yaml (MLPerf Training v1.1-v4.0 at 64 to 4,320 GPUs): when the file
// was added (3 Dec 2026) MAPE 14.93% over 16 points, max |e| 66.5% (BERT at 4,096-4,320 GPUs,
// predicted far too slow); with NCCL's tuning model on by default and the double binary tree,
// MAPE 5.70%, max 19.47% (MT11-R.n540, ResNet-50 at 4,320 A100 now predicted too fast;
// validation/README.md "MLPerf at scale"). 4 Dec: the BERT points reduce their gradient as
// NVIDIA's DistributedFusedLAMB does (one all-reduce after backward), MAPE 4.61%, max 19.47%.
// 7 Dec: raised on purpose by the collective corrections above (intra-node rings, NCCL's stages
// at once), not to pass: the all-reduce of every multi-node point is shorter, MAPE 4.69 -> 7.98%,
// max 19.47 -> 25.12% (MT11-R.n540, ResNet-50 on 4,320 A100, now +25.1%; BERT at 1,024-4,320
// GPUs -7.4..+1.4 -> +8.1..+19.6%; the DGX H100 points -9.5..-3.8 -> -5.6..-1.3%). Then the NCCL
// latency beyond the routes' counts the two stages' route latencies as overlapping (their
// larger): MAPE 7.98 -> 7.91%, max 25.12 -> 24.74% (lowered). 8 Dec: raised on purpose by
// NVLS's volume in the NVSwitch (nvls_intra_volume; a DGX H100's all-reduce reaches the measured
// 480 GB/s bus bandwidth, was the ring's 366): the 1-node DGX H100 anchors expose less
// all-reduce, their fitted efficiency drops 0.1 %, and MT31-R.n8 / MT40-R.n8 / MT40-R.n316 move
// -3.75 / -1.45 / -5.98 -> -3.82 / -1.53 / -6.02 %: MAPE 7.914 -> 7.924 %. Later on 8 Dec the
// BERT points compute the tokens their recipes computed (FORMAT.md `tokens_per_sample`: the
// unpadded anchors and 8-node runs and the packed v2.0 runs 256 tokens per sequence, the padded
// v1.1 runs 512): the anchors' fitted efficiency falls from 2.45-2.60 to 1.05-1.11, the packed
// points go +11.4 / +8.0 -> +0.3 / -2.7 %, the padded MT11-B.n128 / n540 +17.2 / +19.5 ->
// -24.8 / -23.1 %: MAPE 7.924 -> 7.53 %, max 24.74 -> 24.83 % (now MT11-B.n128; the max guard
// raised by that on purpose, validation/README.md "MLPerf at scale"). Then the BERT points run
// attention as their recipes do, one fused kernel per pass (`attention: fused`, apex's FMHA
// family): MT11-B.n128 / n540 -24.8 / -23.1 -> -19.5 / -17.6 %, the others within 0.3 points;
// MAPE 7.53 -> 6.86 %, max 24.83 -> 24.74 % (MT11-R.n540 again).
// Regression guards at that state, to be lowered as the model improves, never raised to pass.
constexpr double kScaleMapePct = 6.87;
constexpr double kScaleMaxAbsPct = 24.75;

// validation/horovod-64gpu.yaml (the 2017 Horovod README's second table: 64 Pascal GPUs on 16
// servers, plain 40 Gbit/s), added 7 Dec 2026 as an out-of-sample check of the host-exchange
// models, none of whose constants comes from it: MAPE 48.61 % over 12 points, max |e| 287.94 %
// (PA-7.hvd-mpi-tcp.vgg16: MPI on the CPU loses far more at 64 GPUs than the model has; see
// validation/README.md "Horovod at 64 GPUs"). NCCL over TCP, whose socket share of a NIC
// (sim/transport.hpp kNcclSocketLinkFraction) comes from two nccl-tests reports, lands within
// +-10 % on all three models (+13.6 / +6.8 / +46.8 % at the link's full rate). Regression guards
// at that state, to be lowered as the model improves, never raised to pass. 7 Dec (later): raised
// on purpose by the large-tensor gRPC rate (kTfGrpcReceiveLargeBps, above), not to pass: it
// brings both 16-GPU VGG-16 parameter-server points within +-5 % and moves the 64-GPU ones from
// +15.0 / +10.0 % to -23.2 / -26.1 % (there the measured step implies at least 0.62 GB/s for
// fc6, between the two cited rates): MAPE 48.61 -> 50.64 %. 7 Dec (later): raised on purpose by
// the collective corrections above, not to pass: NCCL over TCP +9.7 / +3.4 / +7.5 % -> +10.0 /
// +3.7 / +10.3 % (the intra-node stage now runs under the socket transport's), MAPE 50.64 ->
// 50.93 %.
constexpr double kHorovod64MapePct = 50.94;
constexpr double kHorovod64MaxAbsPct = 288.0;
constexpr double kHorovod64NcclTcpMaxAbsPct = 10.4;

// The predict points the engine cannot express today, with their exact reasons (FORMAT.md 5.4:
// listed, never dropped). A point leaving this list (now simulated) or joining it fails the test:
// update the list in the same change that explains why. Empty since parameter servers, MPI on
// the CPU and TCP are simulated (sim/README.md): the 15 PA-6 points that were listed here
// (6 parameter_server/parameter_server_cpu over tcp, 6 Horovod mpi_cpu over tcp or rdma, 3
// Horovod nccl over tcp) all run now.
const std::map<std::string, std::string> kExpectedSkips = {};
// Anchors that cannot be fitted (no predict point uses them), with their reasons. Empty since
// CL-4.fp32 (parameter_server) is simulated.
const std::map<std::string, std::string> kExpectedUnfitted = {};

std::string exe() { return std::string(SCALECAST_BINARY_DIR) + "/cli/scalecast"; }

std::string work_dir(const std::string& name) {
  const auto dir = std::filesystem::path(SCALECAST_BINARY_DIR) / "tests" / "validation" / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

// A whole validation file through the real engine, two children at a time, its table printed:
// every anchor fitted (residual under 0.1 %), every point simulated and none failed.
ValidationRun run_every_point(const ValidationFile& file, const std::string& name) {
  RunPredictor predictor(exe(), work_dir(name));
  ProtocolOptions options;
  options.jobs = 2;
  ValidationRun run = run_protocol(file, predictor, options);
  MESSAGE(format_table(file, run, summarize(run)));
  for (const AnchorFit& a : run.anchors) {
    CHECK_MESSAGE(a.fitted, "anchor " << a.id << ": " << a.skip_reason);
    if (a.fitted) CHECK_MESSAGE(std::abs(a.residual_pct) < 0.1, "anchor " << a.id);
  }
  for (const PointResult& r : run.points) {
    CHECK_MESSAGE(r.simulated, r.point->id << ": " << r.skip_reason);
    CHECK_MESSAGE(!r.failed, r.point->id << " failed: " << r.skip_reason);
  }
  return run;
}

// The anchor and the predict points of one series.
ValidationFile series(const ValidationFile& all, const std::string& anchor) {
  ValidationFile f;
  f.path = all.path;
  for (const ValidationPoint& p : all.points) {
    if (p.id == anchor || p.anchor == anchor) f.points.push_back(p);
  }
  return f;
}

}  // namespace

TEST_SUITE("validation") {
  TEST_CASE("public set overall MAPE within the current target") {
    const ValidationFile file = load_validation_file("validation/public.yaml");
    RunPredictor predictor(exe(), work_dir("public_set"));
    ProtocolOptions options;
    options.jobs = 2;
    const ValidationRun run = run_protocol(file, predictor, options);
    const RunSummary s = summarize(run);
    MESSAGE(format_table(file, run, s));
    MESSAGE("overall MAPE " << s.overall.mape_pct << "% over " << s.overall.count
                            << " points (target " << kTargetMapePct << "%), max |e| "
                            << s.overall.max_abs_pct << "% (limit " << kMaxAbsPct << "%), "
                            << s.overall.skipped << " skipped");
    std::map<std::string, std::string> unfitted;
    for (const AnchorFit& a : run.anchors) {
      if (a.fitted) CHECK_MESSAGE(std::abs(a.residual_pct) < 0.1, "anchor " << a.id);
      CHECK_MESSAGE(!a.failed, "anchor " << a.id << " failed: " << a.skip_reason);
      if (!a.fitted) unfitted[a.id] = a.skip_reason;
    }
    std::map<std::string, std::string> skipped;
    for (const PointResult& r : run.points) {
      // An unexpected child failure is a failure, never a skip.
      CHECK_MESSAGE(!r.failed, r.point->id << " failed: " << r.skip_reason);
      if (!r.simulated) skipped[r.point->id] = r.skip_reason;
    }
    CHECK(run.failures() == 0);
    CHECK(skipped == kExpectedSkips);
    CHECK(unfitted == kExpectedUnfitted);
    REQUIRE(s.overall.count > 0);
    CHECK(s.overall.count + s.overall.skipped == static_cast<int>(run.points.size()));
    CHECK(s.overall.skipped == static_cast<int>(kExpectedSkips.size()));
    // The two groups: NCCL data parallelism against the target, host exchange at its guards.
    std::vector<double> data_parallel, host_exchange;
    std::set<std::string> seen, beyond;
    for (const PointResult& r : run.points) {
      if (!r.simulated) continue;
      if (kHostExchangePoints.count(r.point->id) == 0) {
        data_parallel.push_back(r.error_pct);
        continue;
      }
      host_exchange.push_back(r.error_pct);
      seen.insert(r.point->id);
      if (std::abs(r.error_pct) > kMaxAbsPct) beyond.insert(r.point->id);
    }
    const ErrorSummary dp = summarize(data_parallel);
    const ErrorSummary hx = summarize(host_exchange);
    MESSAGE("NCCL data parallel: MAPE " << dp.mape_pct << "% over " << dp.count
                                        << " points (target " << kTargetMapePct << "%), max |e| "
                                        << dp.max_abs_pct << "% (limit " << kMaxAbsPct << "%)");
    MESSAGE("host exchange: MAPE " << hx.mape_pct << "% over " << hx.count << " points (guard "
                                   << kHostExchangeMapePct << "%), max |e| " << hx.max_abs_pct
                                   << "% (guard " << kHostExchangeMaxAbsPct << "%), "
                                   << beyond.size() << " beyond +-25%");
    CHECK(seen == kHostExchangePoints);
    CHECK(dp.count == s.overall.count - static_cast<int>(kHostExchangePoints.size()));
    CHECK(dp.mape_pct <= kTargetMapePct);
    CHECK(dp.max_abs_pct <= kMaxAbsPct);
    CHECK(hx.mape_pct <= kHostExchangeMapePct);
    CHECK(hx.max_abs_pct <= kHostExchangeMaxAbsPct);
    CHECK(beyond == kHostExchangeBeyond25);
  }

  TEST_CASE("MLPerf at scale set every point simulated and errors within the guards of 7 Dec") {
    const ValidationFile file = load_validation_file("validation/mlperf-scale.yaml");
    const ValidationRun run = run_every_point(file, "mlperf_scale");
    const RunSummary s = summarize(run);
    CHECK(s.overall.count == 16);
    CHECK(s.overall.skipped == 0);
    CHECK(s.overall.mape_pct <= kScaleMapePct);
    CHECK(s.overall.max_abs_pct <= kScaleMaxAbsPct);
  }

  TEST_CASE(
      "Horovod at 64 GPUs: every point simulated, NCCL over TCP within 10.4 %, guards of 7 Dec") {
    const ValidationFile file = load_validation_file("validation/horovod-64gpu.yaml");
    const ValidationRun run = run_every_point(file, "horovod64");
    const RunSummary s = summarize(run);
    int nccl_tcp = 0;
    for (const PointResult& r : run.points)
      if (r.simulated && r.point->id.starts_with("PA-7.hvd-nccl-tcp.")) {
        ++nccl_tcp;
        CHECK_MESSAGE(std::abs(r.error_pct) <= kHorovod64NcclTcpMaxAbsPct,
                      r.point->id << ": " << r.error_pct << "%");
      }
    CHECK(nccl_tcp == 3);
    CHECK(s.overall.count == 12);
    CHECK(s.overall.skipped == 0);
    CHECK(s.overall.mape_pct <= kHorovod64MapePct);
    CHECK(s.overall.max_abs_pct <= kHorovod64MaxAbsPct);
  }

  TEST_CASE("points larger than their platform file run on a machine grown to them") {
    // Issue 13: held-out points up to 3,584 GPUs name systems whose files hold fewer nodes
    // (dgx1-v100: 32 nodes; dgx-a100-40gb: 20). Each machine grows to its point by the file's
    // topology rule instead of the child failing. Measured values are placeholders: only
    // "simulated, not failed" is checked here, never the error.
    const auto pt = [](const std::string& id, const std::string& system, int gpus, int nodes,
                       const std::string& role) {
      return "  - id: " + id + "\n    system: " + system +
             "\n    model: resnet50\n    precision: fp32\n    framework: tensorflow\n    "
             "strategy: allreduce\n    batch_per_gpu: 64\n    gpus: " +
             std::to_string(gpus) + "\n    nodes: " + std::to_string(nodes) +
             "\n    measured:\n      throughput: " + std::to_string(300 * gpus) + "\n" + role +
             "    source: test\n";
    };
    const ValidationFile file = parse_validation_text(
        "schema: scalecast-validation/1\npoints:\n" +
            pt("V.g8", "dgx1-v100", 8, 1, "    role: anchor\n") +
            pt("V.g3584", "dgx1-v100", 3'584, 448, "    role: predict\n    anchor: V.g8\n") +
            pt("A.g8", "dgx-a100-40gb", 8, 1, "    role: anchor\n") +
            pt("A.g512", "dgx-a100-40gb", 512, 64, "    role: predict\n    anchor: A.g8\n"),
        std::string(SCALECAST_SOURCE_DIR) + "/validation/grown.yaml");
    RunPredictor predictor(exe(), work_dir("grown"));
    const ValidationRun run = run_protocol(file, predictor);
    REQUIRE(run.points.size() == 2);
    for (const PointResult& r : run.points) {
      INFO(r.point->id << ": " << r.skip_reason);
      CHECK(r.simulated);
      CHECK_FALSE(r.failed);
      CHECK(r.prediction.throughput_samples_per_s > 0.0);
    }
    CHECK(run.failures() == 0);
  }

  TEST_CASE("real engine predictions do not move when a predict measurement changes") {
    const ValidationFile all = load_validation_file("validation/public.yaml");
    ValidationFile a = series(all, "H-1");  // DGX H100, anchor at 8 GPUs, 3 predict points
    ValidationFile b = a;
    REQUIRE(a.points.size() >= 3);
    // Triple the measured value of every predict point of the series in copy b.
    for (ValidationPoint& p : b.points) {
      if (p.role == Role::kPredict) p.measured.value *= 3.0;
    }
    // Separate predictors: no cached simulation is shared between the two runs.
    RunPredictor pa(exe(), work_dir("perturb_a"));
    RunPredictor pb(exe(), work_dir("perturb_b"));
    const ValidationRun ra = run_protocol(a, pa);
    const ValidationRun rb = run_protocol(b, pb);
    REQUIRE(ra.points.size() == rb.points.size());
    for (std::size_t i = 0; i < ra.points.size(); ++i) {
      INFO(ra.points[i].point->id << ": " << ra.points[i].skip_reason);
      REQUIRE(ra.points[i].simulated);
      CHECK(ra.points[i].predicted == rb.points[i].predicted);
      CHECK(ra.points[i].error_pct != rb.points[i].error_pct);
    }
  }

  TEST_CASE("forked sim-server children predict the same bytes as fresh processes") {
    const ValidationFile all = load_validation_file("validation/public.yaml");
    const ValidationFile a = series(all, "H-1");
    RunPredictor served(exe(), work_dir("served"));
    RunPredictor fresh(exe(), work_dir("fresh"));
    fresh.use_servers(false);
    const ValidationRun rs = run_protocol(a, served);
    const ValidationRun rf = run_protocol(a, fresh);
    REQUIRE(rs.anchors.size() == rf.anchors.size());
    for (std::size_t i = 0; i < rs.anchors.size(); ++i) {
      INFO("anchor " << rs.anchors[i].id);
      CHECK(rs.anchors[i].efficiency == rf.anchors[i].efficiency);
      CHECK(rs.anchors[i].simulated == rf.anchors[i].simulated);
    }
    REQUIRE(rs.points.size() == rf.points.size());
    for (std::size_t i = 0; i < rs.points.size(); ++i) {
      INFO(rs.points[i].point->id << ": " << rs.points[i].skip_reason);
      REQUIRE(rs.points[i].simulated);
      const Prediction& x = rs.points[i].prediction;
      const Prediction& y = rf.points[i].prediction;
      MESSAGE(rs.points[i].point->id << " served " << x.throughput_samples_per_s << " fresh "
                                     << y.throughput_samples_per_s << " samples/s");
      CHECK(x.throughput_samples_per_s == y.throughput_samples_per_s);
      CHECK(x.iteration_time_s == y.iteration_time_s);
      CHECK(x.breakdown.compute_s == y.breakdown.compute_s);
      CHECK(x.breakdown.exposed_comm_s == y.breakdown.exposed_comm_s);
      CHECK(x.breakdown.idle_s == y.breakdown.idle_s);
    }
  }

  TEST_CASE("the simulation server runs with glibc's huge-page heap setting") {
    // As the CLI's point processes (common/simulation_environment.hpp); its forked simulations
    // inherit the setting. The caller's own glibc.malloc.hugetlb, if any, would be kept.
    const char* own = std::getenv("GLIBC_TUNABLES");
    REQUIRE_MESSAGE((own == nullptr || std::string(own).find("hugetlb") == std::string::npos),
                    "run this test without a glibc.malloc.hugetlb setting of its own");
    const std::filesystem::path dir = work_dir("server_env");
    std::filesystem::create_directories(dir);
    SimServer server(exe(), {}, (dir / "server.log").string());
    // The kernel shows a just-started process's environment as empty for a moment: read it again
    // until it is there (a few milliseconds; at most 10 s).
    std::string environ_text;
    for (int tries = 0; environ_text.empty() && tries < 1000; ++tries) {
      if (tries > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::ifstream in("/proc/" + std::to_string(server.pid()) + "/environ");
      environ_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    CHECK(environ_text.find("GLIBC_TUNABLES=") != std::string::npos);
    CHECK(environ_text.find("glibc.malloc.hugetlb=1") != std::string::npos);
  }
}
