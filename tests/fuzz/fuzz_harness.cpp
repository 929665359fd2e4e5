#include "tests/fuzz/fuzz_harness.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/fuzz/known_failures.hpp"
#include "tests/fuzz/mutator.hpp"

namespace scalecast::fuzz {
namespace {

namespace fs = std::filesystem;

std::string shorten(const std::string& s, std::size_t n = 400) {
  return s.size() <= n ? s : s.substr(0, n) + fmt::format("... ({} bytes)", s.size());
}

}  // namespace

std::uint64_t fuzz_seed() {
  const char* v = std::getenv("SCALECAST_FUZZ_SEED");
  return v ? std::strtoull(v, nullptr, 10) : 20261203;
}

std::size_t fuzz_cases(std::size_t default_cases) {
  const char* v = std::getenv("SCALECAST_FUZZ_SCALE");
  const double scale = v ? std::strtod(v, nullptr) : 1.0;
  return std::max<std::size_t>(
      1, static_cast<std::size_t>(static_cast<double>(default_cases) * scale));
}

long fuzz_only() {
  const char* v = std::getenv("SCALECAST_FUZZ_ONLY");
  return v ? std::strtol(v, nullptr, 10) : -1;
}

const SeedFile& seed_of(const std::vector<SeedFile>& seeds, std::size_t index) {
  return seeds[index % seeds.size()];
}

std::string FamilyReport::summary() const {
  std::string s =
      fmt::format("{} cases: {} succeeded, {} located errors, {} known failures, {} failures",
                  cases, successes, located_errors, known, failures.size());
  for (const auto& [owner, n] : known_by_owner) s += fmt::format("\n  known x{}: {}", n, owner);
  return s;
}

FamilyReport judge(const std::string& family, const std::vector<SeedFile>& seeds,
                   std::uint64_t seed, const std::vector<CaseVerdict>& verdicts) {
  FamilyReport report;
  const fs::path dump = fs::path(SCALECAST_BINARY_DIR) / "tests" / "fuzz" / "failures";
  for (const CaseVerdict& v : verdicts) {
    ++report.cases;
    if (v.outcome == Outcome::kSuccess) {
      ++report.successes;
      continue;
    }
    if (v.outcome == Outcome::kConfigError && is_located(v.message)) {
      ++report.located_errors;
      continue;
    }
    const SeedFile& file = seed_of(seeds, v.index);
    const Mutant m = mutate(file.text, seed, v.index);
    if (const KnownFailure* k = find_known(family, v.outcome, v.message, m.description)) {
      ++report.known;
      ++report.known_by_owner[k->owner];
      continue;
    }
    fs::create_directories(dump);
    const fs::path path = dump / fmt::format("{}-{}-{}.yaml", family, seed, v.index);
    std::ofstream(path, std::ios::binary) << m.text;
    report.failures.push_back(
        fmt::format("{} case {} (seed {}): {} of {}{}: {}\n  outcome: {}{}\n  mutant: {}\n  rerun: "
                    "SCALECAST_FUZZ_SEED={} SCALECAST_FUZZ_ONLY={} (same test case)",
                    family, v.index, seed, to_string(m.kind), file.name,
                    file.variant.empty() ? "" : " (" + file.variant + ")", shorten(m.description),
                    to_string(v.outcome),
                    v.outcome == Outcome::kConfigError ? " without a file:line:col location" : "",
                    path.string(), seed, v.index));
    report.failures.back() += "\n  " + shorten(v.message, 2000);
  }
  return report;
}

}  // namespace scalecast::fuzz
