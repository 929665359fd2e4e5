#pragma once
// A deterministic mutator of YAML input files for the robustness property test. A mutant is a
// function of (seed, index, original text) only: mutant i is drawn from Rng(seed).fork(i), so
// one mutant can be rebuilt and rerun on its own. Structural mutations edit the yaml-cpp tree
// (delete a key, swap a value's type, extreme numbers, garbled units, huge strings) and emit it;
// text mutations edit the bytes (flips, truncation, duplicated key lines, deep nesting).

#include <cstdint>
#include <string>
#include <vector>

namespace scalecast::fuzz {

enum class Mutation {
  kDeleteKey,      // remove a map entry or list item
  kSwapType,       // scalar <-> list <-> map
  kExtremeNumber,  // 0, -1, 1e300, nan, inf, 2^31, 2^32+1, 2^63, 1e-300, ... (unit kept)
  kGarbleUnit,     // "50GBps" -> "50", "GBps", "50GB", "50 gbps", ...
  kHugeString,     // a scalar becomes 100,000 characters
  kByteFlip,       // 1-8 random bytes replaced by random bytes
  kTruncate,       // the text cut at a random byte
  kDuplicateKey,   // a "key: value" line repeated right after itself
  kDeepNesting,    // a value becomes [[[...]]] or {a: {a: ...}} hundreds to 100,000 deep
  kCount
};

const char* to_string(Mutation m);

struct Mutant {
  Mutation kind = Mutation::kByteFlip;
  std::string text;         // the mutated file
  std::string description;  // what was changed, for the failure report ("delete nodes")
};

// Mutant `index` of `original` under `seed`. Always returns a mutant (when a structural
// mutation does not apply, e.g. the text does not parse, a text mutation is used instead).
Mutant mutate(const std::string& original, std::uint64_t seed, std::uint64_t index);

// The extreme scalars the kExtremeNumber mutation draws from (exposed for the test's own check).
const std::vector<std::string>& extreme_numbers();

}  // namespace scalecast::fuzz
