#include "sim/network_factors.hpp"

#include <memory>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "sim/machine_zone.hpp"

namespace scalecast::sim {

void configure_network_model(NetworkMode mode) {
  using simgrid::s4u::Engine;
  if (mode == NetworkMode::kIdeal) {
    Engine::set_config("network/model:CM02");
  } else {
    Engine::set_config("network/model:LV08");
  }
  // Links are split-duplex pairs where the hardware is full duplex: no reverse-direction
  // acknowledgement traffic (it costs 5% on every full-duplex ring, docs/simgrid-notes.md).
  Engine::set_config("network/crosstraffic:0");
}

const platforms::FactorRule* match_factor(const platforms::NetworkModelSpec& spec,
                                          double size_bytes,
                                          const std::vector<simgrid::s4u::Link*>& links) {
  std::string_view cls;
  double slowest = 0.0;
  for (const simgrid::s4u::Link* l : links) {
    const double bw = l->get_bandwidth();
    if (cls.empty() || bw < slowest) {
      slowest = bw;
      cls = link_class_of(l->get_name());
    }
  }
  for (const auto& rule : spec.factors) {
    if (rule.link_class != "*" && rule.link_class != cls) continue;
    if (size_bytes < rule.min_size_bytes || size_bytes >= rule.max_size_bytes) continue;
    return &rule;
  }
  return nullptr;
}

void install_network_factors(simgrid::s4u::Engine& engine,
                             const platforms::NetworkModelSpec& spec) {
  auto shared = std::make_shared<platforms::NetworkModelSpec>(spec);
  auto* model = engine.get_netzone_root()->get_network_model();
  model->set_lat_factor_cb([shared](double size, const simgrid::s4u::Host*,
                                    const simgrid::s4u::Host*,
                                    const std::vector<simgrid::s4u::Link*>& links,
                                    const std::unordered_set<simgrid::s4u::NetZone*>&) {
    const auto* rule = match_factor(*shared, size, links);
    return rule != nullptr ? rule->latency_factor : 1.0;
  });
  model->set_bw_factor_cb([shared](double size, const simgrid::s4u::Host*,
                                   const simgrid::s4u::Host*,
                                   const std::vector<simgrid::s4u::Link*>& links,
                                   const std::unordered_set<simgrid::s4u::NetZone*>&) {
    const auto* rule = match_factor(*shared, size, links);
    return rule != nullptr ? rule->bandwidth_factor : 1.0;
  });
}

}  // namespace scalecast::sim
