#pragma once
// The property both fuzz layers check, and its report. A case passes when it succeeds or fails
// with a located error; anything else (another exception, an unlocated message, a crash, a
// timeout, a bad exit status, a NaN in an output) is a failure unless known_failures.hpp lists
// it. A failing case is reported with the seed, its index, the file it mutated and the mutation,
// and the mutant is written to build/.../tests/fuzz/failures/ so that it can be rerun by hand.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/fuzz/case_runner.hpp"
#include "tests/fuzz/seed_files.hpp"

namespace scalecast::fuzz {

// The fixed seed (SCALECAST_FUZZ_SEED overrides it for exploration).
std::uint64_t fuzz_seed();
// `default_cases` scaled by SCALECAST_FUZZ_SCALE (a factor, default 1).
std::size_t fuzz_cases(std::size_t default_cases);
// SCALECAST_FUZZ_ONLY=i: run only case i (to reproduce one); -1 when unset.
long fuzz_only();

struct CaseVerdict {
  std::size_t index = 0;
  Outcome outcome = Outcome::kSuccess;
  std::string message;  // error text, exit status, what was wrong with an output
};

struct FamilyReport {
  std::size_t cases = 0, successes = 0, located_errors = 0, known = 0;
  std::vector<std::string> failures;                  // one paragraph per failing case
  std::map<std::string, std::size_t> known_by_owner;  // known failures per known_failures entry
  std::string summary() const;
};

// Judges the verdicts of a family's cases: success, ConfigError with a located message, or a
// known failure; other verdicts become failure paragraphs (and mutant files).
FamilyReport judge(const std::string& family, const std::vector<SeedFile>& seeds,
                   std::uint64_t seed, const std::vector<CaseVerdict>& verdicts);

// The seed file case `index` mutates.
const SeedFile& seed_of(const std::vector<SeedFile>& seeds, std::size_t index);

}  // namespace scalecast::fuzz
