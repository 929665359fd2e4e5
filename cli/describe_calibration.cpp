#include <fmt/format.h>

#include "calibration/coverage.hpp"
#include "calibration/database.hpp"
#include "cli/commands.hpp"
#include "cli/describe.hpp"

namespace scalecast::cli {

int describe_calibration(const std::string& file) {
  const calibration::Database db = calibration::load_database(file);
  fmt::print("{}", calibration::describe_database(db));
  return kExitOk;
}

}  // namespace scalecast::cli
