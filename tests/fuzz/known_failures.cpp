#include "tests/fuzz/known_failures.hpp"

namespace scalecast::fuzz {

const std::vector<KnownFailure>& known_failures() {
  // harden-files, issue 14 part B item 10 ("parent-side checks"): the files and names a
  // scenario refers to (platform, model, calibration databases) are checked before any point
  // runs, with file:line:col and exit 1. Until then the point process meets them itself: an
  // unknown platform name or a missing calibration database is an error without a line, an
  // unknown model name leaves the zoo as std::invalid_argument and a calibration path longer
  // than the system allows as std::filesystem_error (both exit 4).
  static const std::vector<KnownFailure> kKnown = {
      {"cli-scenario", Outcome::kConfigError, ": error: no platform named '", "",
       "harden-files (B10): unknown platform name -> located error"},
      {"cli-scenario", Outcome::kConfigError, ": error: cannot open calibration database", "",
       "harden-files (B10): missing calibration file -> located error"},
      {"cli-scenario", Outcome::kOtherError, "exit 4, stderr:\nscalecast: error: unknown model '",
       "", "harden-files (B10): unknown model name -> located error, exit 1"},
      {"cli-scenario", Outcome::kOtherError,
       "exit 4, stderr:\nscalecast: error: filesystem error: status: File name too long",
       "calibration", "harden-files (B10): calibration path checked -> located error, exit 1"},
      // harden-numbers, issue 14 part A item 1 (counts read with range checks and a stated
      // limit in every loader): a platform count of 2^31-1 (nics.count, seed 5 case 575) passes
      // the loader, and sizing the routes throws std::length_error (exit 4 from the tool).
      {"*", Outcome::kOtherError, "cannot create std::vector larger than max_size()", ".count",
       "harden-numbers (A1): platform counts get an upper limit -> located error"},
      // clusters (issue 14): a node count beyond the platform's (a mutant that shrinks a
      // machine below the 2 nodes simulated) exits 4 from the point runner; that branch makes
      // clusters grow to the count asked for, or a located error.
      {"cli-platform", Outcome::kOtherError,
       "exit 4, stderr:\nscalecast: error: the scenario asks for 2 nodes; ", "",
       "clusters: node count beyond the platform -> grown cluster or located error"},
  };

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
