#include "sim/host_rings.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <numeric>

#include "sim/intra_rings.hpp"

namespace scalecast::sim {

std::vector<std::vector<int>> rings_over_hosts(const std::vector<simgrid::s4u::Host*>& hosts,
                                               double link_unit_Bps) {
  const int n = static_cast<int>(hosts.size());
  if (n < 3 || n > kMaxRingSearchGpus) {
    std::vector<int> order(hosts.size());
    std::iota(order.begin(), order.end(), 0);
    return {order};
  }
  std::vector<std::vector<double>> direct(n, std::vector<double>(n, 0.0));
  std::vector<simgrid::s4u::Link*> links;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      double bw[2] = {0.0, 0.0};
      for (int d = 0; d < 2; ++d) {
        links.clear();
        double latency = 0.0;
        hosts[d == 0 ? a : b]->route_to(hosts[d == 0 ? b : a], links, &latency);
        if (links.size() == 1) bw[d] = links.front()->get_bandwidth();
      }
      direct[a][b] = direct[b][a] = std::min(bw[0], bw[1]);
    }
  return intra_node_rings(direct_link_units(direct, link_unit_Bps));
}

}  // namespace scalecast::sim
