#include "tests/sim/replay/test_platform.hpp"

#include <simgrid/s4u.hpp>

#include <string>

namespace sg4 = simgrid::s4u;

namespace scalecast::sim::testing {

TestPlatform::TestPlatform(const TestPlatformSpec& spec) : spec_(spec) {
  auto* zone = sg4::create_full_zone("test");
  std::vector<sg4::Link*> gpu_links, nics, h2d, backbones;
  for (int n = 0; n < spec.nodes; ++n) {
    const std::string node = "node" + std::to_string(n);
    cpus_.push_back(zone->create_host(node + "/cpu", 1e9));
    nics.push_back(zone->create_split_duplex_link(node + "/nic", spec.nic_bw)
                       ->set_latency(spec.nic_lat_s)
                       ->seal());
    for (int g = 0; g < spec.gpus; ++g) {
      const std::string name = node + "/gpu" + std::to_string(g);
      gpus_.push_back(zone->create_host(name, 1e12));
      gpu_links.push_back(zone->create_split_duplex_link(name + "/nvlink", spec.gpu_link_bw)
                              ->set_latency(spec.gpu_link_lat_s)
                              ->seal());
      h2d.push_back(
          zone->create_link(name + "/h2d", spec.h2d_bw)->set_latency(spec.h2d_lat_s)->seal());
    }
  }
  for (int b = 0; b < spec.backbones; ++b)
    backbones.push_back(
        zone->create_split_duplex_link("backbone" + std::to_string(b), spec.backbone_bw)
            ->set_latency(spec.backbone_lat_s)
            ->seal());
  using D = sg4::LinkInRoute::Direction;
  const int total = spec.nodes * spec.gpus;
  for (int a = 0; a < total; ++a) {
    for (int b = 0; b < total; ++b) {
      if (a == b) continue;
      const int na = a / spec.gpus, nb = b / spec.gpus;
      std::vector<sg4::LinkInRoute> route{{gpu_links[a], D::UP}};
      if (na != nb) {
        route.push_back({nics[na], D::UP});
        const int bb = spec.backbone ? spec.backbone(na, nb) : -1;
        if (bb >= 0) route.push_back({backbones[bb], na < nb ? D::UP : D::DOWN});
        route.push_back({nics[nb], D::DOWN});
      }
      route.push_back({gpu_links[b], D::DOWN});
      zone->add_route(gpus_[a]->get_netpoint(), gpus_[b]->get_netpoint(), nullptr, nullptr, route,
                      false);
    }
    zone->add_route(cpus_[a / spec.gpus]->get_netpoint(), gpus_[a]->get_netpoint(), nullptr,
                    nullptr, {sg4::LinkInRoute(h2d[a])}, true);
  }
  if (spec.host_routes)
    for (int na = 0; na < spec.nodes; ++na)
      for (int nb = 0; nb < spec.nodes; ++nb) {
        if (na == nb) continue;
        const sg4::LinkInRoute up(nics[na], D::UP), down(nics[nb], D::DOWN);
        zone->add_route(cpus_[na]->get_netpoint(), cpus_[nb]->get_netpoint(), nullptr, nullptr,
                        {up, down}, false);
        for (int g = 0; g < spec.gpus; ++g) {
          const int a = na * spec.gpus + g;
          zone->add_route(gpus_[a]->get_netpoint(), cpus_[nb]->get_netpoint(), nullptr, nullptr,
                          {sg4::LinkInRoute(gpu_links[a], D::UP), up, down}, false);
          zone->add_route(cpus_[nb]->get_netpoint(), gpus_[a]->get_netpoint(), nullptr, nullptr,
                          {sg4::LinkInRoute(nics[nb], D::UP), sg4::LinkInRoute(nics[na], D::DOWN),
                           sg4::LinkInRoute(gpu_links[a], D::DOWN)},
                          false);
        }
      }
  if (spec.nvme_read_bw > 0.0)
    for (int n = 0; n < spec.nodes; ++n)
      nvme_.push_back(cpus_[n]
                          ->create_disk("node" + std::to_string(n) + "/nvme", spec.nvme_read_bw,
                                        spec.nvme_read_bw)
                          ->seal());
  if (spec.pfs_servers > 0) {
    sg4::Link* aggregate = zone->create_link("pfs/aggregate", spec.pfs_aggregate_bw)->seal();
    for (int k = 0; k < spec.pfs_servers; ++k) {
      const std::string name = "pfs/server" + std::to_string(k);
      sg4::Host* h = zone->create_host(name, 1e9);
      h->create_disk(name + "/disk", spec.pfs_disk_bw, spec.pfs_disk_bw)->seal();
      servers_.push_back(h);
      sg4::Link* link = zone->create_link(name + "/link", spec.pfs_link_bw)->seal();
      for (int n = 0; n < spec.nodes; ++n)
        zone->add_route(h->get_netpoint(), cpus_[n]->get_netpoint(), nullptr, nullptr,
                        {sg4::LinkInRoute(link), sg4::LinkInRoute(aggregate),
                         sg4::LinkInRoute(nics[n], D::DOWN)},
                        false);
    }
  }
  zone->seal();
}

}  // namespace scalecast::sim::testing
