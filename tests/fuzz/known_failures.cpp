#include "tests/fuzz/known_failures.hpp"

namespace scalecast::fuzz {

const std::vector<KnownFailure>& known_failures() {
  // Empty: every class the first runs found (unlocated errors for unknown platform, model and
  // calibration names, exit 4 for a 2^31-1 platform count, node counts beyond the platform file)
  // is fixed. A new entry must name the owner of the fix and be removed with it.
  static const std::vector<KnownFailure> kKnown = {};
  return kKnown;
}

const KnownFailure* find_known(const std::string& family, Outcome outcome,
                               const std::string& message, const std::string& mutation) {
  for (const KnownFailure& k : known_failures()) {
    if (k.family != "*" && k.family != family) continue;
    if (k.outcome != outcome) continue;
    if (message.find(k.message_contains) == std::string::npos) continue;
    if (mutation.find(k.mutation_contains) == std::string::npos) continue;
    return &k;
  }
  return nullptr;
}

}  // namespace scalecast::fuzz
