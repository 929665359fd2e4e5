#include "cli/commands.hpp"
#include "cli/describe.hpp"

namespace scalecast::cli {

int describe_platform(const std::string& /*name_or_path*/, bool /*schema_only*/) {
  throw NotBuilt("describe platform: not built yet (issue 'Platforms')");
}

}  // namespace scalecast::cli
