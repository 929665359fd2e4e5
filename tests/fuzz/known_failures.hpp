#pragma once
// Failures the fuzz test finds whose fix belongs to another branch of issue 14. Each entry is
// matched narrowly (loader family, outcome, a piece of the message and/or of the mutation) and
// names the branch that fixes it; once that branch is merged, delete the entry and the test
// must still pass. Keep this list short: anything not owned elsewhere is fixed, not listed.

#include <string>
#include <vector>

#include "tests/fuzz/case_runner.hpp"

namespace scalecast::fuzz {

struct KnownFailure {
  std::string family;             // "scenario", "platform", ... or "*" (any)
  Outcome outcome;                // how it fails
  std::string message_contains;   // a piece of the error text ("" = any)
  std::string mutation_contains;  // a piece of the mutation description ("" = any)
  std::string owner;              // the branch that fixes it, and what it fixes
};

const std::vector<KnownFailure>& known_failures();

// The entry that excuses this failure, or nullptr.
const KnownFailure* find_known(const std::string& family, Outcome outcome,
                               const std::string& message, const std::string& mutation);

}  // namespace scalecast::fuzz
