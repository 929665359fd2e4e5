#include "sim/star_platform.hpp"

#include <fmt/format.h>

#include <chrono>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "sim/engine_setup.hpp"

namespace scalecast::sim {
namespace {

namespace sg4 = simgrid::s4u;

class StarPlatform final : public SimulatedPlatform {
 public:
  StarPlatform(int nodes, int gpus, const StarLinks& links) : nodes_(nodes), gpus_per_node_(gpus) {
    auto* zone = sg4::create_star_zone("star");
    for (int n = 0; n < nodes; ++n) {
      auto* nic = zone->create_split_duplex_link(fmt::format("nic{}", n), links.nic_bandwidth)
                      ->set_latency(links.nic_latency_s)
                      ->seal();
      auto* cpu = zone->create_host(fmt::format("cpu{}", n), 1e9);
      zone->add_route(cpu->get_netpoint(), nullptr, nullptr, nullptr,
                      {{nic, sg4::LinkInRoute::Direction::UP}}, true);
      cpus_.push_back(cpu);
      for (int g = 0; g < gpus; ++g) {
        const std::string name = fmt::format("n{}g{}", n, g);
        auto* h = zone->create_host(name, 1e12);
        auto* l = zone->create_split_duplex_link(name, links.gpu_bandwidth)
                      ->set_latency(links.gpu_latency_s)
                      ->seal();
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

}  // namespace

StarRun replay_on_star_platform(int nodes, int gpus_per_node, JobSpec spec,
                                const StarLinks& links) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto engine = create_engine({NetworkMode::kIdeal});
  StarPlatform platform(nodes, gpus_per_node, links);
  const auto t1 = Clock::now();
  spec.nodes.clear();
  for (int n = 0; n < nodes; ++n) spec.nodes.push_back(n);
  spec.gpus_per_node = gpus_per_node;
  Job job(platform, spec);
  engine->run();
  const auto t2 = Clock::now();
  return {job.result(), std::chrono::duration<double>(t1 - t0).count(),
          std::chrono::duration<double>(t2 - t1).count()};
}

}  // namespace scalecast::sim
