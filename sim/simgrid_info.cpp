#include "sim/simgrid_info.hpp"

#include <fmt/format.h>
#include <xbt/base.h>  // defines the macros simgrid/version.h uses

#include <simgrid/version.h>

namespace scalecast::sim {

std::string simgrid_version() {
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);
  return patch > 0 ? fmt::format("{}.{}.{}", major, minor, patch)
                   : fmt::format("{}.{}", major, minor);
}

}  // namespace scalecast::sim
