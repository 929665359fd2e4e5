#include "tests/fuzz/known_failures.hpp"

namespace scalecast::fuzz {

const std::vector<KnownFailure>& known_failures() {
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
