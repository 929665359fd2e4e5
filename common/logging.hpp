#pragma once
// Logging through spdlog, to stderr so stdout stays for results. One switch for the whole tool:
// --quiet shows warnings and errors, the default shows info, --verbose shows debug detail.

#include <spdlog/spdlog.h>

namespace scalecast::common {

enum class Verbosity { kQuiet, kNormal, kVerbose };

// Installs the stderr logger with the given level; safe to call more than once.
void init_logging(Verbosity verbosity);

}  // namespace scalecast::common
