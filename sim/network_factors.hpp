#pragma once
// How SimGrid's network model is set up for a platform (docs/simgrid-notes.md, "Network model").
// Ideal: CM02 without cross-traffic and without factors, so one large flow reaches the link
// bandwidth exactly (analytic tests). Calibrated: LV08 whose latency and bandwidth factors are
// replaced by per-route factors from the platform file, chosen by the class of the route's
// bottleneck link and the message size.

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <vector>

#include "platforms/platform.hpp"
#include "sim/simulated_platform.hpp"

namespace scalecast::sim {

// Sets the model configuration; must run before the first netzone is created.
void configure_network_model(NetworkMode mode);

// Installs the factor callbacks of `spec` on the root zone's network model (calibrated mode).
void install_network_factors(simgrid::s4u::Engine& engine, const platforms::NetworkModelSpec& spec);

// The rule matching a route (bottleneck link class) and a size; nullptr when none matches.
const platforms::FactorRule* match_factor(const platforms::NetworkModelSpec& spec,
                                          double size_bytes,
                                          const std::vector<simgrid::s4u::Link*>& links);

}  // namespace scalecast::sim
