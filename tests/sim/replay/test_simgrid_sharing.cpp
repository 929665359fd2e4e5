// What SimGrid 3.32's max-min sharing does with a link listed more than once in a route, the
// fact a class representative at flow fidelity would stand on (issue 18, sim/README.md "Flow
// fidelity at scale"): the flow's variable gets one element per listing, so a link listed k times
// carries k units of the flow's rate. One flow then takes exactly the share, and leaves the other
// flows exactly the share, of k flows of its class. Closed forms (ideal network, no latency, one
// link of capacity C = 1 GB/s, flows of 1 GB): alone and listed k times, the flow ends at k s;
// beside one plain flow, both end at (k + 1) s, as k + 1 separate flows would.

#include <doctest/doctest.h>
#include <simgrid/s4u.hpp>

#include <string>
#include <vector>

#include "sim/engine_setup.hpp"

namespace sg4 = simgrid::s4u;

namespace {

constexpr double kCapacity = 1e9;  // bytes/s
constexpr double kBytes = 1e9;
constexpr int kMaxListings = 3;

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("simgrid: a link listed k times in a route carries k units of the flow's rate") {
    // One engine per process: every case runs at once on links of its own.
    auto engine = scalecast::sim::create_engine({scalecast::sim::NetworkMode::kIdeal});
    auto* zone = sg4::create_full_zone("world");
    struct Flow {
      std::string box;
      sg4::Host* from;
      sg4::Host* to;
      double end_s = -1.0;
    };
    std::vector<Flow> flows;
    int hosts = 0;
    const auto host = [&] {
      std::string name = "h";
      name += std::to_string(hosts++);
      return zone->create_host(name, 1e9);
    };
    const auto add = [&](const std::string& box, sg4::Link* link, int listings) {
      Flow f{box, host(), host()};
      std::vector<sg4::LinkInRoute> route(static_cast<std::size_t>(listings),
                                          sg4::LinkInRoute(link));
      zone->add_route(f.from->get_netpoint(), f.to->get_netpoint(), nullptr, nullptr, route, false);
      flows.push_back(f);
    };
    for (int k = 1; k <= kMaxListings; ++k) {
      const auto name = [k](std::string what) { return what += std::to_string(k); };
      add(name("alone"), zone->create_link(name("alone"), kCapacity)->set_latency(0)->seal(), k);
      sg4::Link* shared = zone->create_link(name("shared"), kCapacity)->set_latency(0)->seal();
      add(name("weighted"), shared, k);
      add(name("plain"), shared, 1);
    }
    zone->seal();
    static int payload = 0;
    for (Flow& f : flows) {
      sg4::Actor::create(f.box, f.from, [&f] {
        sg4::Mailbox::by_name(f.box)->put(&payload, static_cast<std::uint64_t>(kBytes));
        f.end_s = sg4::Engine::get_clock();
      });
      sg4::Actor::create(f.box, f.to, [&f] { sg4::Mailbox::by_name(f.box)->get<int>(); });
    }
    engine->run();
    for (int k = 1; k <= kMaxListings; ++k) {
      CAPTURE(k);
      const auto at = [&](int i) { return flows[static_cast<std::size_t>(3 * (k - 1) + i)].end_s; };
      CHECK(at(0) == doctest::Approx(k * kBytes / kCapacity).epsilon(1e-9));        // alone
      CHECK(at(1) == doctest::Approx((k + 1) * kBytes / kCapacity).epsilon(1e-9));  // weighted
      CHECK(at(2) == doctest::Approx((k + 1) * kBytes / kCapacity).epsilon(1e-9));  // plain
    }
  }
}
