// Engine-only speed check on a synthetic star platform (no platform/model layers needed): N
// nodes x G GPUs, each GPU with a private link, each node one NIC link shared by its GPUs, a
// ResNet-50-sized step (161 gradient tensors, 51 MB fp16 in all, 100 ms backward).
// Usage: bench_replay_synthetic NODES [GPUS=6] [flow|wave] [FUSION_MB=64] [CYCLE_MS=0]

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include <sys/resource.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sim/engine_setup.hpp"
#include "sim/job.hpp"

namespace sg4 = simgrid::s4u;
using namespace scalecast::sim;

namespace {

class StarPlatform : public SimulatedPlatform {
 public:
  StarPlatform(int nodes, int gpus) : nodes_(nodes), gpus_per_node_(gpus) {
    auto* zone = sg4::create_star_zone("star");
    for (int n = 0; n < nodes; ++n) {
      auto* nic = zone->create_split_duplex_link(fmt::format("nic{}", n), 12.5e9)
                      ->set_latency(1e-6)
                      ->seal();
      auto* cpu = zone->create_host(fmt::format("cpu{}", n), 1e9);
      zone->add_route(cpu->get_netpoint(), nullptr, nullptr, nullptr,
                      {{nic, sg4::LinkInRoute::Direction::UP}}, true);
      cpus_.push_back(cpu);
      for (int g = 0; g < gpus; ++g) {
        const std::string name = fmt::format("n{}g{}", n, g);
        auto* h = zone->create_host(name, 1e12);
        auto* l = zone->create_split_duplex_link(name, 50e9)->set_latency(0.5e-6)->seal();
        zone->add_route(
            h->get_netpoint(), nullptr, nullptr, nullptr,
            {{l, sg4::LinkInRoute::Direction::UP}, {nic, sg4::LinkInRoute::Direction::UP}}, true);
        gpus_.push_back(h);
      }
    }
    zone->seal();
  }
  int node_count() const override { return nodes_; }
  int gpus_per_node(int) const override { return gpus_per_node_; }
  sg4::Host* gpu(int n, int g) const override { return gpus_[n * gpus_per_node_ + g]; }
  sg4::Host* cpu(int n, int) const override { return cpus_[n]; }
  int socket_of_gpu(int, int) const override { return 0; }
  sg4::Disk* nvme(int) const override { return nullptr; }
  std::vector<sg4::Host*> pfs_servers() const override { return {}; }
  std::string gpu_type(int) const override { return "synthetic"; }

 private:
  int nodes_, gpus_per_node_;
  std::vector<sg4::Host*> gpus_, cpus_;
};

StepProgram resnet_like() {
  StepProgram p;
  p.batch_per_gpu = 256;
  const int fwd = 160, bwd = 161 * 2;
  for (int i = 0; i < fwd + bwd; ++i) {
    ProgramOp op;
    op.name = fmt::format("op{}", i);
    op.duration_s = i < fwd ? 50e-3 / fwd : 100e-3 / bwd;
    if (i > 0) op.preds = {static_cast<std::size_t>(i - 1)};
    p.ops.push_back(op);
    if (i >= fwd && (i - fwd) % 2 == 1)
      p.gradients.push_back({fmt::format("g{}", i), 51.1e6 / 161, p.ops.size() - 1});
  }
  ProgramOp opt;
  opt.name = "optimizer";
  opt.duration_s = 3e-3;
  opt.optimizer = true;
  p.ops.push_back(opt);
  p.input_bytes = 256 * 150528.0;
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 64;
  const int gpus = argc > 2 ? std::atoi(argv[2]) : 6;
  const std::string fid = argc > 3 ? argv[3] : "wave";
  const double fusion_mb = argc > 4 ? std::atof(argv[4]) : 64.0;
  const double cycle_ms = argc > 5 ? std::atof(argv[5]) : 0.0;
  const auto t0 = std::chrono::steady_clock::now();
  auto engine = create_engine({NetworkMode::kIdeal});
  StarPlatform platform(nodes, gpus);
  const auto t1 = std::chrono::steady_clock::now();
  JobSpec spec;
  for (int n = 0; n < nodes; ++n) spec.nodes.push_back(n);
  spec.gpus_per_node = gpus;
  spec.program = resnet_like();
  spec.allreduce.algorithm = Algorithm::kHierarchical;
  spec.allreduce.fusion_bytes = fusion_mb * 1024 * 1024;
  spec.allreduce.cycle_time_s = cycle_ms * 1e-3;
  spec.fidelity = fid == "flow" ? Fidelity::kFlow : Fidelity::kWave;
  spec.iterations = 1;
  spec.symmetric = std::getenv("BENCH_NOSYM") == nullptr;
  spec.nic_groups.assign(gpus, 0);  // one NIC per node
  Job job(platform, spec);
  engine->run();
  const auto t2 = std::chrono::steady_clock::now();
  const JobResult r = job.result();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "nodes %d gpus %d %s: iteration %.4f s, buckets %.0f, exposed %.4f s | build %.2f s, "
      "replay %.2f s, peak RSS %.0f MB\n",
      nodes, nodes * gpus, fid.c_str(), r.iteration_time_s, r.buckets_per_iteration,
      r.breakdown.exposed_comm_s, std::chrono::duration<double>(t1 - t0).count(),
      std::chrono::duration<double>(t2 - t1).count(), ru.ru_maxrss / 1024.0);
  return 0;
}
