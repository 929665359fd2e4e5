#include "cli/commands.hpp"
#include "cli/describe.hpp"

namespace scalecast::cli {

int describe_model(const DescribeModelOptions& /*options*/) {
  throw NotBuilt("describe model: not built yet (issue 'Models')");
}

}  // namespace scalecast::cli
