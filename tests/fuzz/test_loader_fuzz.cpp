// In-process layer of the fuzz property test: thousands of mutants of the shipped scenario,
// platform, GPU catalog, model, calibration and validation files through their loaders, each
// case in a forked child with a time limit (case_runner.hpp). Every outcome must be success or a
// common::ConfigError located at file:line:col.
#include <doctest/doctest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include <functional>
#include <set>

#include "calibration/database.hpp"
#include "models/model_yaml.hpp"
#include "models/training_step.hpp"
#include "platforms/gpu_catalog.hpp"
#include "platforms/platform.hpp"
#include "sim/scenario.hpp"
#include "tests/fuzz/fuzz_harness.hpp"
#include "tests/fuzz/mutator.hpp"
#include "tests/fuzz/output_check.hpp"
#include "validation/validation_file.hpp"

namespace fs = std::filesystem;
using namespace scalecast;
using fuzz::SeedFile;

namespace {

// A loader under test: reads `text` as the contents of `file`; `work` is a scratch folder.
using Loader =
    std::function<void(const SeedFile& file, const std::string& text, const fs::path& work)>;

constexpr double kCaseTimeoutS = 20.0;

void fuzz_family(const std::string& family, const std::vector<SeedFile>& seeds,
                 std::size_t default_cases, const Loader& load) {
  const std::uint64_t seed = fuzz::fuzz_seed();
  const std::size_t cases = fuzz::fuzz_cases(default_cases);
  const long only = fuzz::fuzz_only();
  const fs::path work = fs::path(SCALECAST_BINARY_DIR) / "tests" / "fuzz" / ("work-" + family);
  fs::create_directories(work);
  // Relative names in the inputs (platform names, calibration paths) resolve from the repository.
  fs::current_path(SCALECAST_SOURCE_DIR);
  std::vector<std::size_t> indices;
  if (only >= 0)
    indices.push_back(static_cast<std::size_t>(only));
  else
    for (std::size_t i = 0; i < cases; ++i) indices.push_back(i);
  const auto results = fuzz::run_isolated(indices.size(), kCaseTimeoutS, [&](std::size_t k) {
    const SeedFile& file = fuzz::seed_of(seeds, indices[k]);
    load(file, fuzz::mutate(file.text, seed, indices[k]).text, work);
  });
  std::vector<fuzz::CaseVerdict> verdicts;
  for (std::size_t k = 0; k < results.size(); ++k)
    verdicts.push_back({indices[k], results[k].outcome, results[k].message});
  const fuzz::FamilyReport report = fuzz::judge(family, seeds, seed, verdicts);
  MESSAGE(family << ": " << report.summary());
  for (const std::string& f : report.failures) FAIL_CHECK(f);
  CHECK(report.failures.empty());
  // The property is only worth something if the mutants reach past the parser and the loaders
  // accept some of them: a test where every case fails the same way tests nothing.
  if (only < 0) {
    CHECK(report.located_errors > report.cases / 4);
    CHECK(report.successes > 0);
  }
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("the mutator is deterministic and covers every mutation") {
    const std::string text = fuzz::read_source_file("scenarios/summit-resnet50.yaml");
    std::set<fuzz::Mutation> kinds;
    for (std::uint64_t i = 0; i < 300; ++i) {
      const fuzz::Mutant a = fuzz::mutate(text, 7, i), b = fuzz::mutate(text, 7, i);
      REQUIRE(a.text == b.text);
      REQUIRE(a.description == b.description);
      CHECK(a.text != text);
      kinds.insert(a.kind);
    }
    CHECK(kinds.size() == static_cast<std::size_t>(fuzz::Mutation::kCount));
    CHECK(fuzz::mutate(text, 7, 3).text != fuzz::mutate(text, 8, 3).text);
  }

  TEST_CASE("the case runner reports crashes, hangs and unlocated errors") {
    const auto r = fuzz::run_isolated(5, 2.0, [](std::size_t i) {
      if (i == 1) std::abort();
      if (i == 2) ::pause();  // never returns: no signal comes
      if (i == 3) throw std::runtime_error("plain");
      if (i == 4) throw common::ConfigError("f.yaml", 3, 4, "a.b", "expected x");
    });
    CHECK(r[0].outcome == fuzz::Outcome::kSuccess);
    CHECK(r[1].outcome == fuzz::Outcome::kCrash);
    CHECK(r[2].outcome == fuzz::Outcome::kTimeout);
    CHECK(r[3].outcome == fuzz::Outcome::kOtherError);
    CHECK(r[4].outcome == fuzz::Outcome::kConfigError);
    CHECK(fuzz::is_located(r[4].message));
    CHECK_FALSE(fuzz::is_located("f.yaml: error: a.b: expected x"));
    CHECK_FALSE(fuzz::is_located("f.yaml:0:0: error: x"));
    CHECK(fuzz::is_located("[I] log line\nplatforms/x.yaml:12:5: error: k: v"));
  }

  TEST_CASE("the output check finds NaN, infinity and null durations, not words") {
    CHECK(fuzz::bad_value("layer,time_s\nconv1,1.5\nconv2,nan\n", true) != "");
    CHECK(fuzz::bad_value("a,b\n1,2\n3,-inf\n", true) != "");
    CHECK(fuzz::bad_value("{\"iteration_time_s\":Infinity}", false) != "");
    CHECK(fuzz::bad_value("{\"x\": [1, NaN]}", false) != "");
    CHECK(fuzz::bad_value("[{\"name\":\"x\",\"dur\":null}]", false) != "");
    CHECK(fuzz::bad_value("{\"compute_s\": null}", false) != "");
    CHECK(fuzz::bad_value("{\"vs_1_gpu\":null,\"name\":\"inf\",\"i\":\"nan\"}", false) == "");
    CHECK(fuzz::bad_value("op,time_s\ninf,1.5\n\"nan\",2\n", true) == "");
  }

  TEST_CASE("scenario mutants through load_scenario_text") {
    fuzz_family("scenario", fuzz::scenario_seeds(), 600,
                [](const SeedFile& f, const std::string& text, const fs::path&) {
                  sim::load_scenario_text(text, f.name);
                });
  }

  TEST_CASE("platform mutants through parse_platform") {
    const std::string base = std::string(SCALECAST_SOURCE_DIR) + "/platforms";
    fuzz_family("platform", fuzz::platform_seeds(), 800,
                [&](const SeedFile& f, const std::string& text, const fs::path&) {
                  platforms::parse_platform(text, f.name, base);
                });
  }

  TEST_CASE("GPU catalog mutants through GpuCatalog and a platform") {
    // The mutant catalog is read on its own and as the catalog of an unchanged platform.
    const std::string platform = fuzz::read_source_file("platforms/dgx1-v100.yaml");
    fuzz_family("gpu_catalog", fuzz::gpu_catalog_seeds(), 300,
                [&](const SeedFile& f, const std::string& text, const fs::path& work) {
                  write(work / "gpus.yaml", text);
                  platforms::GpuCatalog::load_file((work / "gpus.yaml").string(), f.name);
                  platforms::parse_platform(platform, "platforms/dgx1-v100.yaml", work.string());
                });
  }

  TEST_CASE("model mutants through load_model_string and build_training_step") {
    fuzz_family("model", fuzz::model_seeds(), 500,
                [](const SeedFile& f, const std::string& text, const fs::path&) {
                  const models::Model m = models::load_model_string(text, f.name);
                  models::build_training_step(m, models::StepOptions{});
                });
  }

  TEST_CASE("calibration database mutants through parse_database") {
    fuzz_family("calibration", fuzz::calibration_seeds(), 400,
                [](const SeedFile& f, const std::string& text, const fs::path&) {
                  calibration::parse_database(text, f.name);
                });
  }

  TEST_CASE("validation file mutants through parse_validation_text") {
    fuzz_family("validation", fuzz::validation_seeds(), 300,
                [](const SeedFile& f, const std::string& text, const fs::path&) {
                  validation::parse_validation_text(text, f.name);
                });
  }
}
