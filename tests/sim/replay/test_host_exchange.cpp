// Gradient exchange through host memory, against closed forms on small platforms built in the
// test (ideal network, zero latencies): parameter servers (push, update, pull through one
// bottleneck NIC), MPI all-reduce on the CPU (copy, ring with CPU reduction, copy), the TCP
// stream limit and NCCL's socket transport share of a NIC; plus the scenario keys' errors. Each
// TEST_CASE is its own process.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <limits>
#include <string>
#include <vector>

#include "calibration/cost_model.hpp"
#include "common/config_error.hpp"
#include "models/zoo.hpp"
#include "sim/engine_setup.hpp"
#include "sim/job.hpp"
#include "sim/parameter_server.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_runner.hpp"
#include "sim/transport.hpp"
#include "tests/sim/replay/flat_cost_model.hpp"
#include "tests/sim/replay/replay_fixtures.hpp"
#include "tests/sim/replay/test_platform.hpp"

using namespace scalecast::sim;
using namespace scalecast::sim::testing;

namespace {

constexpr double S = 100e6;  // gradient bytes
constexpr double B = 1e9;    // NIC bytes/s (the bottleneck)
constexpr double H = 16e9;   // host-device link
constexpr double M = 10e9;   // memory bandwidth of the PS task / the CPU socket

TestPlatformSpec platform_spec(int nodes) {
  TestPlatformSpec ps;
  ps.nodes = nodes;
  ps.gpus = 1;
  ps.nic_bw = B;
  ps.h2d_bw = H;
  ps.gpu_link_lat_s = ps.nic_lat_s = ps.h2d_lat_s = 0.0;
  ps.host_routes = true;
  return ps;
}

// One gradient of S bytes, no compute, no optimizer time: the iteration is the exchange.
JobSpec exchange_job(std::vector<int> nodes) {
  JobSpec j;
  j.name = "job";
  j.nodes = std::move(nodes);
  j.gpus_per_node = 1;
  j.program = synthetic_program(0, 0.0, 1, 0.0, S, 0.0);
  j.allreduce.fusion_bytes = 1e12;
  j.allreduce.algorithm = Algorithm::kRing;
  j.fidelity = Fidelity::kFlow;
  j.warmup = 0;
  j.iterations = 2;
  return j;
}

JobSpec ps_job(PsMode mode) {
  JobSpec j = exchange_job({1, 2});
  j.ps.tasks = 1;
  j.ps.placement = PsPlacement::kCpu;
  j.ps.mode = mode;
  j.ps.variables = PsVariables::kCpu;
  j.ps_nodes = {0};
  j.ps_memory_Bps = {M};
  j.ps.receive_Bps = 0.0;  // gRPC free: the closed forms below are NIC and memory only
  return j;
}

JobSpec mpi_job(Transport transport, double tcp_stream_Bps) {
  JobSpec j = exchange_job({0, 1});
  j.allreduce.library = Library::kMpiCpu;
  j.allreduce.transport = transport;
  j.tcp.host_s_per_byte = 1.0 / tcp_stream_Bps;
  j.cpu_memory_Bps = M;
  return j;
}

const char* kPsBase = R"(platform: uber-pascal-roce25
model: resnet50
nodes: [2, 4]
gpus_per_node: 4
)";

std::string error_of(const std::string& text) {
  try {
    load_scenario_text(text, "in.yaml");
  } catch (const scalecast::common::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

Scenario ps_scenario() {
  return load_scenario_text(std::string(kPsBase) +
                                "iterations: 1\nwarmup: 0\nstrategy: parameter_server\n"
                                "parameter_server: {tasks: 2}\nallreduce: {transport: tcp}\n",
                            "in.yaml");
}

double gradient_bytes(const Scenario& s) {
  const auto step = scenario_step(s, scalecast::models::load_model(s.model));
  double bytes = 0.0;
  for (const auto& g : step.gradients()) bytes += g.bytes;
  return bytes;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE(
      "parameter server: two workers push and pull through the task's NIC, update at memory "
      "bandwidth") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(platform_spec(3));
    Job job(platform, ps_job(PsMode::kSync));
    engine->run();
    const JobResult r = job.result();
    // Pushes: both workers' S share the task's NIC (down): 2S/B. Then the task adds each
    // gradient into its accumulator and applies the update, one at a time: (2 + 1) x 3S/M.
    // Pulls: both share the NIC (up): 2S/B.
    const double expected = 2 * S / B + 3 * kUpdateTrafficPerByte * S / M + 2 * S / B;
    INFO("expected " << expected << " s, actual " << r.iteration_time_s << " s");
    CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(1e-6));
    CHECK(expected == doctest::Approx(4 * S / B + ps_update_s(S, M, PsMode::kSync, 2)));
    // Every byte crossed the NIC: 2 pushes and 2 pulls of S per iteration.
    CHECK(r.bytes_per_iteration.at("inter_node") == doctest::Approx(4 * S));
    // Nothing computes: the worker waits for the exchange the whole iteration.
    CHECK(r.breakdown.exposed_comm_s == doctest::Approx(r.iteration_time_s).epsilon(1e-9));
  }

  TEST_CASE("parameter server: asynchronous training applies each push, without the sync pass") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(platform_spec(4));
    // One worker each: push S/B, apply 3S/M, pull S/B; synchronous adds the accumulation pass
    // (the gradient is added into the accumulator, then the accumulator applied).
    JobSpec a = ps_job(PsMode::kAsync), s = ps_job(PsMode::kSync);
    a.name = "async";
    a.nodes = {1};
    s.name = "sync";
    s.nodes = {3};
    s.ps_nodes = {2};
    Job async_job(platform, a), sync_job(platform, s);
    engine->run();
    const double transfer = 2 * S / B, pass = kUpdateTrafficPerByte * S / M;
    CHECK(async_job.result().iteration_time_s == doctest::Approx(transfer + pass).epsilon(1e-6));
    CHECK(sync_job.result().iteration_time_s == doctest::Approx(transfer + 2 * pass).epsilon(1e-6));
    CHECK(ps_update_s(S, M, PsMode::kAsync, 1) == doctest::Approx(pass));
  }

  TEST_CASE("parameter server: each process takes its received tensors out of gRPC one at a time") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(platform_spec(3));
    constexpr double R = 1e9;  // gRPC receive rate of every process
    JobSpec j = ps_job(PsMode::kSync);
    j.ps.receive_Bps = R;
    Job job(platform, j);
    engine->run();
    // Both pushes cross the task's NIC together (2S/B), then the task's one gRPC thread takes
    // them out one after the other (S/R each); the first accumulation (3S/M, shorter than S/R)
    // runs while the second is taken out, the second after it, then the update (3S/M). Both
    // pulls share the NIC (2S/B) and each worker's own thread takes its pull out (S/R, in
    // parallel): 4S/B + 3S/R + 2 x 3S/M.
    const double a = kUpdateTrafficPerByte * S / M;
    REQUIRE(S / R >= a);
    const double expected = 4 * S / B + 3 * S / R + 2 * a;
    INFO("expected " << expected << " s, actual " << job.result().iteration_time_s << " s");
    CHECK(job.result().iteration_time_s == doctest::Approx(expected).epsilon(1e-6));
  }

  TEST_CASE("parameter server: a job with a negative gRPC receive rate is refused up front") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(platform_spec(3));
    JobSpec small = ps_job(PsMode::kSync), large = ps_job(PsMode::kSync);
    small.ps.receive_Bps = -1.0;
    large.ps.receive_large_Bps = -1.0;
    CHECK_THROWS_AS(Job(platform, small), std::invalid_argument);
    CHECK_THROWS_AS(Job(platform, large), std::invalid_argument);
  }

  TEST_CASE("parameter server: a worker on the task's GPU moves nothing but still crosses gRPC") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(platform_spec(1));
    constexpr double R = 1e9;
    JobSpec j = ps_job(PsMode::kAsync);
    j.nodes = {0};
    j.ps.placement = PsPlacement::kColocated;
    j.ps.variables = PsVariables::kGpu;
    j.ps.receive_Bps = R;
    Job job(platform, j);
    engine->run();
    // Worker and task are two processes on one GPU: no flow, but the task's thread takes the
    // push (S/R), the task applies it (3S/M), the worker's thread takes the pull (S/R).
    const double expected = 2 * S / R + kUpdateTrafficPerByte * S / M;
    CHECK(job.result().iteration_time_s == doctest::Approx(expected).epsilon(1e-6));
  }

  TEST_CASE("parameter server: the gRPC receive time, closed form and errors") {
    // The cited rates: 0.9 GB/s per process [TF-issue6116] up to 100 MB, the mean of 569.27 and
    // 520 MB/s measured at 128 MB [TF-issue6256] from 128 MB on.
    CHECK(kTfGrpcReceiveBps == doctest::Approx(0.9e9));
    CHECK(kTfGrpcReceiveLargeBps == doctest::Approx(0.544635e9));
    CHECK(ParameterServerConfig{}.receive_Bps == kTfGrpcReceiveBps);
    CHECK(ParameterServerConfig{}.receive_large_Bps == kTfGrpcReceiveLargeBps);
    // 16 workers' pushes of VGG-16's fc6 gradient (4096 x 25088 floats, 411 MB) through one
    // task's thread at the large-tensor rate: 16 x 411 MB / 0.545 GB/s = 12.1 s (7.3 s at the
    // small-tensor rate, which the VGG-16 parameter-server points measured slower than).
    const double fc6 = 4096.0 * 25088.0 * 4.0;
    CHECK(ps_receive_s(fc6, 16, kTfGrpcReceiveBps) ==
          doctest::Approx(16 * fc6 / kTfGrpcReceiveLargeBps));
    CHECK(ps_receive_s(fc6, 16, kTfGrpcReceiveBps) == doctest::Approx(12.07).epsilon(0.01));
    // fc7 (4096 x 4096 floats, 67 MB) is below 100 MB: the small-tensor rate.
    const double fc7 = 4096.0 * 4096.0 * 4.0;
    CHECK(ps_receive_s(fc7, 16, kTfGrpcReceiveBps) == doctest::Approx(16 * fc7 / 0.9e9));
    // Between 100 and 128 MB the rate is linear in the size: halfway, halfway between the rates.
    CHECK(grpc_receive_rate(100e6, 0.9e9, 0.5e9) == doctest::Approx(0.9e9));
    CHECK(grpc_receive_rate(114e6, 0.9e9, 0.5e9) == doctest::Approx(0.7e9));
    CHECK(grpc_receive_rate(128e6, 0.9e9, 0.5e9) == doctest::Approx(0.5e9));
    CHECK(grpc_receive_rate(1e12, 0.9e9, 0.5e9) == doctest::Approx(0.5e9));
    // 0 is free, at any size; negative rates are errors.
    CHECK(ps_receive_s(fc6, 16, 0.0, 0.0) == 0.0);
    CHECK(ps_receive_s(fc6, 16, 0.0) == 0.0);  // a free small-tensor rate turns gRPC off
    CHECK(ps_receive_s(fc7, 16, 0.0, 0.5e9) == 0.0);
    CHECK(ps_receive_s(114e6, 16, 0.9e9, 0.0) == 0.0);
    CHECK_THROWS_AS(ps_receive_s(fc6, 1, -1.0), std::invalid_argument);
    CHECK_THROWS_AS(ps_receive_s(fc7, 1, 0.9e9, -1.0), std::invalid_argument);
  }

  TEST_CASE("round-robin sharding puts VGG-16's fc6 on one of 4 tasks: the hotspot") {
    const Scenario s = load_scenario_text(
        "platform: uber-pascal-roce25\nmodel: vgg16\nnodes: [4]\ngpus_per_node: 4\n", "in.yaml");
    const auto step = scenario_step(s, scalecast::models::load_model(s.model));
    StepProgram p;
    double total = 0.0, largest = 0.0;
    for (const auto& g : step.gradients()) {
      p.gradients.push_back({g.name, g.bytes, 0});
      total += g.bytes;
      largest = std::max(largest, g.bytes);
    }
    const std::vector<int> task = round_robin_shards(p, 4);
    std::vector<double> per_task(4, 0.0);
    for (std::size_t g = 0; g < task.size(); ++g) per_task[task[g]] += p.gradients[g].bytes;
    const double hottest = *std::max_element(per_task.begin(), per_task.end());
    // fc6's weight gradient, 4096 x 25088 fp32 = 411 MB, is one variable: its task holds it
    // whole, about three quarters of VGG-16's 553 MB, whatever the placement strategy.
    CHECK(largest == doctest::Approx(4096.0 * 25088.0 * 4.0));
    CHECK(total == doctest::Approx(553e6).epsilon(0.01));
    CHECK(hottest >= largest);
    CHECK(hottest / total > 0.74);
  }

  TEST_CASE("round-robin sharding follows creation order, the reverse of the ready order") {
    StepProgram p = synthetic_program(0, 0.0, 5, 1e-3, 1.0, 0.0);
    // Ready order g0..g4 = created last..first: g4 was created first (task 0).
    CHECK(round_robin_shards(p, 2) == std::vector<int>{0, 1, 0, 1, 0});
    CHECK(round_robin_shards(p, 3) == std::vector<int>{1, 0, 2, 1, 0});
    CHECK_THROWS_AS(round_robin_shards(p, 0), std::invalid_argument);
  }

  TEST_CASE("greedy sharding puts each variable, in creation order, on the least-loaded task") {
    // Ready order g0..g4 = created last..first; bytes by ready index below. Creation order is
    // g4 (4), g3 (1), g2 (3), g1 (2), g0 (5): task 0 takes 4; task 1 takes 1; task 1 (1 < 4)
    // takes 3; task 0 and 1 tie at 4, the lower index takes 2; task 1 (4 < 6) takes 5.
    StepProgram p = synthetic_program(0, 0.0, 5, 1e-3, 1.0, 0.0);
    const double bytes[] = {5, 2, 3, 1, 4};
    for (int g = 0; g < 5; ++g) p.gradients[g].bytes = bytes[g];
    CHECK(greedy_shards(p, 2) == std::vector<int>{1, 0, 1, 1, 0});
    CHECK(ps_shards(p, 2, PsSharding::kGreedy) == greedy_shards(p, 2));
    CHECK(ps_shards(p, 2, PsSharding::kRoundRobin) == round_robin_shards(p, 2));
    // One task holds everything; more tasks than variables leave the last ones empty.
    CHECK(greedy_shards(p, 1) == std::vector<int>{0, 0, 0, 0, 0});
    CHECK(greedy_shards(p, 7) == std::vector<int>{4, 3, 2, 1, 0});
    CHECK_THROWS_AS(greedy_shards(p, 0), std::invalid_argument);
  }

  TEST_CASE("MPI on the CPU: device-to-host copy, ring with CPU reduction, host-to-device copy") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(platform_spec(2));
    Job job(platform, mpi_job(Transport::kNative, 1.0));
    engine->run();
    const JobResult r = job.result();
    // Copies S/H each way on private links; 2 ranks: 2 ring steps of S/2 over the NICs (each
    // direction carries one), the first followed by the reduction of S/2 (3 bytes of memory
    // traffic each) at the socket's bandwidth (one rank per socket).
    const double expected = 2 * S / H + 2 * (S / 2) / B + 3 * (S / 2) / M;
    INFO("expected " << expected << " s, actual " << r.iteration_time_s << " s");
    CHECK(r.iteration_time_s == doctest::Approx(expected).epsilon(1e-6));
    CHECK(r.bytes_per_iteration.at("host_device") == doctest::Approx(2 * 2 * S));
    CHECK(r.bytes_per_iteration.at("inter_node") == doctest::Approx(2 * 2 * S / 2));
  }

  TEST_CASE("MPI on the CPU: one core's rate bounds the reduction, fused buckets add two memcpys") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(platform_spec(4));
    constexpr double C = 4e9;  // one core, below the socket's M
    // Two tensors of S/2 in one bucket: Horovod copies them into its fusion buffer and out.
    Job fused(platform, [&] {
      JobSpec j = mpi_job(Transport::kNative, 1.0);
      j.name = "fused";
      j.cpu_core_Bps = C;
      j.program = synthetic_program(0, 0.0, 2, 0.0, S / 2, 0.0);
      return j;
    }());
    // One tensor: no fusion-buffer copy, and a core faster than the socket changes nothing.
    Job single(platform, [&] {
      JobSpec j = mpi_job(Transport::kNative, 1.0);
      j.name = "single";
      j.nodes = {2, 3};
      j.cpu_core_Bps = 2 * M;
      return j;
    }());
    engine->run();
    const double copies = 2 * S / H, ring = 2 * (S / 2) / B;
    const double expected_fused = copies + 2 * 2 * S / C + ring + 3 * (S / 2) / C;
    const double expected_single = copies + ring + 3 * (S / 2) / M;
    INFO("fused: expected " << expected_fused << " s, actual " << fused.result().iteration_time_s
                            << " s; single: expected " << expected_single << " s, actual "
                            << single.result().iteration_time_s << " s");
    CHECK(fused.result().iteration_time_s == doctest::Approx(expected_fused).epsilon(1e-6));
    CHECK(single.result().iteration_time_s == doctest::Approx(expected_single).epsilon(1e-6));
  }

  TEST_CASE("TCP: one stream moves at most 1 / (host CPU time per byte)") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(platform_spec(4));
    const double stream = 0.25e9;  // below the NIC's 1 GB/s
    Job tcp(platform, [&] {
      JobSpec j = mpi_job(Transport::kTcp, stream);
      j.name = "tcp";
      return j;
    }());
    Job native(platform, [&] {
      JobSpec j = mpi_job(Transport::kNative, stream);
      j.name = "native";
      j.nodes = {2, 3};
      return j;
    }());
    engine->run();
    const double copies = 2 * S / H, reduce = 3 * (S / 2) / M;
    CHECK(tcp.result().iteration_time_s ==
          doctest::Approx(copies + 2 * (S / 2) / stream + reduce).epsilon(1e-6));
    CHECK(native.result().iteration_time_s ==
          doctest::Approx(copies + 2 * (S / 2) / B + reduce).epsilon(1e-6));
    TcpParams p{1.0 / stream};
    CHECK(p.stream_rate_Bps() == doctest::Approx(stream));
    CHECK(TcpParams{}.stream_rate_Bps() == std::numeric_limits<double>::infinity());
  }

  TEST_CASE("NCCL over TCP: flows between nodes move at the socket transport's share of a NIC") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(platform_spec(8));
    const auto nccl_job = [](const char* name, std::vector<int> nodes, Transport t, Algorithm a) {
      JobSpec j = exchange_job(std::move(nodes));
      j.name = name;
      j.allreduce.transport = t;
      j.allreduce.algorithm = a;
      if (t == Transport::kTcp) j.tcp = tcp_params_for("25gbe");
      return j;
    };
    Job ring_tcp(platform, nccl_job("ring_tcp", {0, 1}, Transport::kTcp, Algorithm::kRing));
    Job ring_native(platform,
                    nccl_job("ring_native", {2, 3}, Transport::kNative, Algorithm::kRing));
    Job tree_tcp(platform, nccl_job("tree_tcp", {4, 5}, Transport::kTcp, Algorithm::kTree));
    Job tree_native(platform,
                    nccl_job("tree_native", {6, 7}, Transport::kNative, Algorithm::kTree));
    engine->run();
    const double eta = kNcclSocketLinkFraction;
    CHECK(eta == doctest::Approx((2.06 / 4.0 + 1.7 / 3.125) / 2).epsilon(0.002));
    // 2 ranks on 2 nodes: 2 ring steps of S/2, one each way through each NIC, at eta x B.
    CHECK(ring_native.result().iteration_time_s == doctest::Approx(2 * (S / 2) / B).epsilon(1e-6));
    CHECK(ring_tcp.result().iteration_time_s ==
          doctest::Approx(2 * (S / 2) / (eta * B)).epsilon(1e-6));
    // Every edge of the 2-member trees is between the nodes and the routes have no latency: the
    // whole all-reduce takes 1 / eta as long.
    CHECK(tree_tcp.result().iteration_time_s ==
          doctest::Approx(tree_native.result().iteration_time_s / eta).epsilon(1e-6));
    // The recorder counts the payload, not the time the socket transport holds the NIC.
    CHECK(ring_tcp.result().bytes_per_iteration.at("inter_node") == doctest::Approx(2 * S));
    CHECK(ring_native.result().bytes_per_iteration.at("inter_node") == doctest::Approx(2 * S));
    CHECK(tree_tcp.result().bytes_per_iteration.at("inter_node") ==
          doctest::Approx(tree_native.result().bytes_per_iteration.at("inter_node")));
  }

  TEST_CASE("CUDA-aware MPI over TCP: each message between nodes moves at most one stream's rate") {
    auto engine = create_engine({NetworkMode::kIdeal});
    TestPlatform platform(platform_spec(8));
    const double stream = 0.25e9;  // below the NIC's 1 GB/s: the cap binds
    const auto mpi_gpu_job = [&](const char* name, std::vector<int> nodes, Transport t,
                                 Algorithm a) {
      JobSpec j = exchange_job(std::move(nodes));
      j.name = name;
      j.allreduce.library = Library::kMpi;
      j.allreduce.transport = t;
      j.allreduce.algorithm = a;
      j.tcp.host_s_per_byte = 1.0 / stream;
      return j;
    };
    Job ring_tcp(platform, mpi_gpu_job("ring_tcp", {0, 1}, Transport::kTcp, Algorithm::kRing));
    Job ring_native(platform,
                    mpi_gpu_job("ring_native", {2, 3}, Transport::kNative, Algorithm::kRing));
    Job tree_tcp(platform, mpi_gpu_job("tree_tcp", {4, 5}, Transport::kTcp, Algorithm::kTree));
    Job tree_native(platform,
                    mpi_gpu_job("tree_native", {6, 7}, Transport::kNative, Algorithm::kTree));
    engine->run();
    // 2 ranks on 2 nodes: 2 ring steps of S/2 between the nodes, at the NIC's rate natively and
    // at one TCP stream's over TCP; the difference is 2 (S/2) (1/stream - 1/B).
    CHECK(ring_native.result().iteration_time_s == doctest::Approx(2 * (S / 2) / B).epsilon(1e-6));
    CHECK(ring_tcp.result().iteration_time_s ==
          doctest::Approx(2 * (S / 2) / stream).epsilon(1e-6));
    CHECK(ring_tcp.result().iteration_time_s - ring_native.result().iteration_time_s ==
          doctest::Approx(2 * (S / 2) * (1 / stream - 1 / B)).epsilon(1e-6));
    // Every tree edge is between the nodes and each flow has its direction of a link to itself:
    // the whole all-reduce takes B / stream as long.
    CHECK(tree_tcp.result().iteration_time_s ==
          doctest::Approx(tree_native.result().iteration_time_s * B / stream).epsilon(1e-6));
    CHECK(ring_tcp.result().bytes_per_iteration.at("inter_node") == doctest::Approx(2 * S));
  }

  TEST_CASE("TCP parameters: Ethernet and IPoIB from the measured single-stream receive rate") {
    // 42.2 Gbit/s: one flow at 100 % of one receiving core [Cai-SIGCOMM21].
    CHECK(tcp_params_for("25gbe").stream_rate_Bps() == doctest::Approx(42.2e9 / 8));
    CHECK(tcp_params_for("edr").stream_rate_Bps() == doctest::Approx(42.2e9 / 8));
    // NCCL's socket transport share, the same over both (sim/transport.hpp).
    CHECK(tcp_params_for("25gbe").nccl_link_fraction == kNcclSocketLinkFraction);
    CHECK(tcp_params_for("edr").nccl_link_fraction == kNcclSocketLinkFraction);
    CHECK(TcpParams{}.nccl_link_fraction == 1.0);
    CHECK_THROWS_WITH_AS(tcp_params_for("slingshot11"),
                         "NIC technology \"slingshot11\" carries no TCP/IP here (expected "
                         "Ethernet, e.g. 25gbe, or InfiniBand for IPoIB, e.g. edr)",
                         std::invalid_argument);
  }

  TEST_CASE("scenario: parameter-server and transport keys, and their errors") {
    const Scenario s = load_scenario_text(
        std::string(kPsBase) +
            "strategy: parameter_server\n"
            "parameter_server: {tasks: 2, placement: colocated, mode: async, variables: gpu, "
            "sharding: greedy}\n"
            "allreduce: {transport: tcp}\n",
        "in.yaml");
    CHECK(s.parameter_server.tasks == 2);
    CHECK(s.parameter_server.sharding == PsSharding::kGreedy);
    CHECK(s.parameter_server.mode == PsMode::kAsync);
    CHECK(s.parameter_server.variables == PsVariables::kGpu);
    CHECK(s.allreduce.transport == Transport::kTcp);
    CHECK(s.parameter_server.receive_Bps == kTfGrpcReceiveBps);
    // The parameter_server block of a scenario, given the keys after `tasks: 2`.
    const auto ps_block = [](const std::string& keys) {
      return load_scenario_text(std::string(kPsBase) +
                                    "strategy: parameter_server\n"
                                    "parameter_server: {tasks: 2" +
                                    keys + "}\n",
                                "in.yaml")
          .parameter_server;
    };
    const ParameterServerConfig r = ps_block(", receive_rate: 0.5GBps");
    CHECK(r.receive_Bps == doctest::Approx(0.5e9));
    // receive_rate alone caps the large-tensor rate too; receive_rate_large sets it.
    CHECK(r.receive_large_Bps == doctest::Approx(0.5e9));
    CHECK(s.parameter_server.receive_large_Bps == kTfGrpcReceiveLargeBps);
    CHECK(ps_block(", receive_rate: 2GBps").receive_large_Bps == kTfGrpcReceiveLargeBps);
    const ParameterServerConfig large =
        ps_block(", receive_rate: 2GBps, receive_rate_large: 1GBps");
    CHECK(large.receive_Bps == doctest::Approx(2e9));
    CHECK(large.receive_large_Bps == doctest::Approx(1e9));
    CHECK(error_of(std::string(kPsBase) + "strategy: parameter_server\nparameter_server: {tasks: "
                                          "2, receive_rate_large: -1GBps}\n") ==
          "in.yaml:6:50: error: parameter_server.receive_rate_large: expected a non-negative "
          "bandwidth, got \"-1GBps\"");
    CHECK(r.sharding == PsSharding::kRoundRobin);  // TensorFlow's default
    CHECK(error_of(std::string(kPsBase) +
                   "strategy: parameter_server\nparameter_server: {tasks: 2, sharding: size}\n") ==
          "in.yaml:6:40: error: parameter_server.sharding: expected one of round_robin, greedy, "
          "got \"size\"");
    CHECK(error_of(std::string(kPsBase) +
                   "strategy: parameter_server\nparameter_server: {tasks: 2, receive_rate: 5}\n") ==
          "in.yaml:6:44: error: parameter_server.receive_rate: expected a bandwidth like "
          "\"50GBps\", got \"5\" (the unit is missing)");
    // 0 is free; a denormal rate passed "at least 0" and SimGrid aborted on an infinite sleep.
    CHECK(error_of(std::string(kPsBase) + "strategy: parameter_server\nparameter_server: {tasks: "
                                          "2, receive_rate: 1e-310Bps}\n") ==
          "in.yaml:6:44: error: parameter_server.receive_rate: expected 0 (free) or at least 1 "
          "kB/s, got \"1e-310Bps\"");
    const ParameterServerConfig free_grpc = ps_block(", receive_rate: 0GBps");
    CHECK(free_grpc.receive_Bps == 0.0);
    CHECK(free_grpc.receive_large_Bps == 0.0);
    CHECK(error_of(std::string(kPsBase) + "strategy: parameter_server\n") ==
          "in.yaml:5:11: error: strategy: parameter_server needs a parameter_server block: a "
          "map with tasks (and placement, mode, variables), e.g. parameter_server: {tasks: 4}");
    // Chosen by an override, the override is the place named (was in.yaml:1:1, a place in the
    // override's text given the file's name).
    try {
      (void)load_scenario_text(kPsBase, "in.yaml", {{"strategy", "parameter_server"}});
      FAIL("no error");
    } catch (const scalecast::common::ConfigError& e) {
      CHECK(std::string(e.what()) ==
            "--set strategy=parameter_server: error: strategy: parameter_server needs a "
            "parameter_server block: a map with tasks (and placement, mode, variables), e.g. "
            "parameter_server: {tasks: 4}");
    }
    CHECK(error_of(std::string(kPsBase) +
                   "strategy: parameter_server\nparameter_server: {tasks: 0}\n") ==
          "in.yaml:6:27: error: parameter_server.tasks: expected at least 1 (a whole number from "
          "1 to 1,000,000), got 0");
    CHECK(error_of(std::string(kPsBase) +
                   "strategy: parameter_server\nparameter_server: {tasks: -3}\n") ==
          "in.yaml:6:27: error: parameter_server.tasks: expected at least 1 (a whole number from "
          "1 to 1,000,000), got -3");
    CHECK(error_of(std::string(kPsBase) +
                   "strategy: parameter_server\nparameter_server: {tasks: 3}\n") ==
          "in.yaml:6:27: error: parameter_server.tasks: expected at most 2 (placement colocated "
          "puts one task on each of the job's nodes and the point at nodes[0] has 2 nodes), got "
          "3");
    CHECK(error_of(std::string(kPsBase) + "cluster: {nodes: 4}\nstrategy: parameter_server\n" +
                   "parameter_server: {tasks: 1, placement: cpu}\n") ==
          "in.yaml:7:27: error: parameter_server.tasks: expected at most 0 (placement cpu needs "
          "nodes of its own: cluster.nodes is 4 and the point at nodes[1] uses 4), got 1");
    CHECK(error_of(std::string(kPsBase) + "parameter_server: {tasks: 1}\n") ==
          "in.yaml:5:19: error: parameter_server: expected only with strategy: parameter_server");
    CHECK(error_of(std::string(kPsBase) + "strategy: model_parallel\n") ==
          "in.yaml:5:11: error: strategy: expected data_parallel or parameter_server, got "
          "\"model_parallel\"");
    CHECK(error_of("platform: perlmutter\nmodel: resnet50\nnodes: 2\n"
                   "allreduce: {transport: tcp}\n") ==
          "in.yaml:4:24: error: allreduce.transport: platform perlmutter node type gpu-a100-40gb: "
          "NIC "
          "technology \"slingshot11\" carries no TCP/IP here (expected Ethernet, e.g. 25gbe, or "
          "InfiniBand for IPoIB, e.g. edr)");
    CHECK(error_of("platform: summit\nmodel: resnet50\nnodes: 2\n"
                   "allreduce: {library: mpi_cpu}\n") ==
          "in.yaml:4:22: error: allreduce.library: platform summit gives no "
          "cpu.memory_bandwidth for node type ac922; allreduce library mpi_cpu's reduction in "
          "host memory runs at it (add node_types.ac922.cpu.memory_bandwidth to the platform "
          "file)");
    // A platform whose NICs carry no RDMA (nics.rdma: false) runs TCP without being asked, and
    // refuses the native transport; a RoCE platform keeps it.
    CHECK(load_scenario_text("platform: aws-p3-16xlarge\nmodel: resnet50\nnodes: 2\n", "in.yaml")
              .allreduce.transport == Transport::kTcp);
    CHECK(load_scenario_text(std::string(kPsBase), "in.yaml").allreduce.transport ==
          Transport::kNative);
    CHECK(error_of("platform: aws-p3-16xlarge\nmodel: resnet50\nnodes: 2\n"
                   "allreduce: {transport: native}\n") ==
          "in.yaml:4:24: error: allreduce.transport: expected tcp: platform aws-p3-16xlarge node "
          "type dgx1v has NICs without RDMA (nics.rdma: false), so its collectives run over "
          "TCP/IP");
    CHECK(error_of(std::string(kPsBase) + "allreduce: {transport: udp}\n") ==
          "in.yaml:5:24: error: allreduce.transport: expected one of native, tcp, got \"udp\"");
  }

  // run_point builds its own engine: one per process, so one run per TEST_CASE.
  TEST_CASE("scenario point: colocated tasks keep part of the traffic on the worker's node") {
    const Scenario s = ps_scenario();
    const JobResult r = run_point(s, PointRequest(2), FlatCostModel());
    CHECK(r.gpus == 8);
    CHECK(r.breakdown.exposed_comm_s > 0.0);
    // Each worker's own node holds one of the two tasks: less than every byte crosses a NIC.
    CHECK(r.bytes_per_iteration.at("inter_node") < 2.0 * 8 * gradient_bytes(s));
    CHECK(r.bytes_per_iteration.at("inter_node") > 0.0);
  }

  TEST_CASE("scenario point: tasks on CPU hosts of their own get nodes beside the job's") {
    Scenario s = ps_scenario();
    s.parameter_server.placement = PsPlacement::kCpu;
    const JobResult r = run_point(s, PointRequest(2), FlatCostModel());
    CHECK(r.gpus == 8);
    // Every push and pull crosses a NIC.
    CHECK(r.bytes_per_iteration.at("inter_node") ==
          doctest::Approx(2.0 * 8 * gradient_bytes(s)).epsilon(1e-9));
  }

  TEST_CASE("scenario point: run's 1-node baseline keeps one colocated task, not an error") {
    const JobResult r = run_point(ps_scenario(), PointRequest(1), FlatCostModel());
    CHECK(r.gpus == 4);
    CHECK(r.iteration_time_s > 0.0);
    CHECK(r.bytes_per_iteration.at("inter_node") == 0.0);  // one node: nothing crosses a NIC
  }
}
