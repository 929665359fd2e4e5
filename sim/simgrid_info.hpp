#pragma once
// Which SimGrid scalecast was built and runs against; recorded in --version and summary.json.

#include <string>

namespace scalecast::sim {

// "3.32" style version of the SimGrid library linked at run time.
std::string simgrid_version();

}  // namespace scalecast::sim
