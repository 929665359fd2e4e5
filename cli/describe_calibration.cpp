#include "cli/commands.hpp"
#include "cli/describe.hpp"

namespace scalecast::cli {

int describe_calibration(const std::string& /*file*/) {
  throw NotBuilt("describe calibration: not built yet (issue 'Calibration')");
}

}  // namespace scalecast::cli
