#include "common/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace scalecast::common {

void init_logging(Verbosity verbosity) {
  auto logger = spdlog::get("scalecast");
  if (!logger) {
    logger = spdlog::stderr_color_mt("scalecast");
    logger->set_pattern("[%L] %v");
    spdlog::set_default_logger(logger);
  }
  switch (verbosity) {
    case Verbosity::kQuiet:
      spdlog::set_level(spdlog::level::warn);
      break;
    case Verbosity::kNormal:
      spdlog::set_level(spdlog::level::info);
      break;
    case Verbosity::kVerbose:
      spdlog::set_level(spdlog::level::debug);
      break;
  }
}

}  // namespace scalecast::common
