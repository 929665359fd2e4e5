// Command-line layer of the fuzz property test: a few hundred mutants through the real
// `scalecast run` (the one-point process `run --point`, and for some scenario mutants the whole
// run with its parent), `describe` and `validate`, each command with a time limit. Every command
// must exit 0 with no NaN, infinity or null duration in any output file, or exit 1 with a located
// error on stderr; another exit status, a signal or a timeout fails. Simulated points are tiny
// (two nodes of two GPUs, so that the network is used; one iteration) so that the whole test
// runs in a few minutes on 2 cores.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include "platforms/platform.hpp"
#include "tests/fuzz/fuzz_harness.hpp"
#include "tests/fuzz/mutator.hpp"
#include "tests/fuzz/output_check.hpp"

namespace fs = std::filesystem;
using namespace scalecast;
using fuzz::SeedFile;

namespace {

const std::string kTool = std::string(SCALECAST_BINARY_DIR) + "/cli/scalecast";
constexpr double kCommandTimeoutS = 90.0;
constexpr int kWorkers = 2;

// The commands of one case: each gets the case folder; files it writes go there.
using Prepare = std::function<std::vector<std::vector<std::string>>(
    const std::string& mutant, const fs::path& dir, std::size_t index)>;

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

std::string quoted(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "'" : " '") + a + "'";
  return s;
}

// The verdict of one command (kSuccess when it holds the property).
fuzz::CaseVerdict judge_command(std::size_t index, const std::vector<std::string>& argv,
                                const fs::path& dir) {
  // From the repository, as a user runs it: shipped scenarios name their files relative to it.
  const fuzz::CommandResult r = fuzz::run_command(argv, SCALECAST_SOURCE_DIR, kCommandTimeoutS);
  const std::string where =
      "command: (cd " + std::string(SCALECAST_SOURCE_DIR) + " && " + quoted(argv) + ")\n";
  const std::string tail = r.stderr_text.substr(0, 6000);
  if (r.timed_out)
    return {index, fuzz::Outcome::kTimeout,
            where + "no exit after " + std::to_string(kCommandTimeoutS) + " s"};
  if (r.signal != 0)
    return {index, fuzz::Outcome::kCrash,
            where + "killed by signal " + std::to_string(r.signal) + ", stderr:\n" + tail};
  if (r.exit_code == 0) {
    const std::string bad = fuzz::bad_output(dir);
    if (!bad.empty())
      return {index, fuzz::Outcome::kOtherError, where + "exit 0 with a bad output: " + bad};
    return {index, fuzz::Outcome::kSuccess, ""};
  }
  if (r.exit_code == 1) return {index, fuzz::Outcome::kConfigError, where + tail};
  return {index, fuzz::Outcome::kOtherError,
          where + "exit " + std::to_string(r.exit_code) + ", stderr:\n" + tail};
}

void fuzz_cli(const std::string& family, const std::vector<SeedFile>& seeds,
              std::size_t default_cases, const Prepare& prepare) {
  REQUIRE(fs::exists(kTool));
  const std::uint64_t seed = fuzz::fuzz_seed();
  const long only = fuzz::fuzz_only();
  std::vector<std::size_t> indices;
  if (only >= 0)
    indices.push_back(static_cast<std::size_t>(only));
  else
    for (std::size_t i = 0; i < fuzz::fuzz_cases(default_cases); ++i) indices.push_back(i);
  const fs::path root = fs::path(SCALECAST_BINARY_DIR) / "tests" / "fuzz" / "cli-work";
  std::vector<fuzz::CaseVerdict> verdicts(indices.size());
  std::atomic<std::size_t> next{0};
  std::mutex fs_mutex;
  auto worker = [&] {
    for (std::size_t k; (k = next++) < indices.size();) {
      const std::size_t i = indices[k];
      const SeedFile& file = fuzz::seed_of(seeds, i);
      const fs::path dir = root / (family + "-" + std::to_string(seed) + "-" + std::to_string(i));
      std::vector<std::vector<std::string>> commands;
      {
        std::lock_guard<std::mutex> lock(fs_mutex);
        fs::remove_all(dir);
        fs::create_directories(dir);
        commands = prepare(fuzz::mutate(file.text, seed, i).text, dir, i);
      }
      fuzz::CaseVerdict v{i, fuzz::Outcome::kSuccess, ""};
      for (const auto& argv : commands) {
        v = judge_command(i, argv, dir);
        const bool ok = v.outcome == fuzz::Outcome::kSuccess ||
                        (v.outcome == fuzz::Outcome::kConfigError && fuzz::is_located(v.message));
        if (!ok) break;
        if (v.outcome != fuzz::Outcome::kSuccess) break;  // a located error ends the case
      }
      const bool passed = v.outcome == fuzz::Outcome::kSuccess ||
                          (v.outcome == fuzz::Outcome::kConfigError && fuzz::is_located(v.message));
      if (passed) fs::remove_all(dir);  // a failing case keeps its folder to rerun by hand
      verdicts[k] = v;
    }
  };
  std::vector<std::thread> pool;
  for (int w = 0; w < kWorkers; ++w) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  const fuzz::FamilyReport report = fuzz::judge(family, seeds, seed, verdicts);
  MESSAGE(family << ": " << report.summary());
  for (const std::string& f : report.failures) FAIL_CHECK(f);
  CHECK(report.failures.empty());
  if (only < 0) CHECK(report.successes > 0);  // some mutants must get through to a simulation
}

// A shipped scenario shrunk to one iteration on two nodes of two GPUs: mutants stay fast.
std::string tiny_scenario(const std::string& text) {
  YAML::Node s = YAML::Load(text);
  s["nodes"] = 2;
  s["gpus_per_node"] = 2;
  s["iterations"] = 1;
  s["warmup"] = 0;
  YAML::Emitter out;
  out << s;
  return std::string(out.c_str()) + "\n";
}

// A scenario for a mutated platform, model or calibration file in `dir`.
std::string scenario_with(const std::string& platform, const std::string& model,
                          const std::string& calibration, int nodes = 2) {
  std::string s = "platform: " + platform + "\nmodel: " + model +
                  "\nprecision: fp16\nbatch_per_gpu: 16\nnodes: " + std::to_string(nodes) +
                  "\ngpus_per_node: 2\niterations: 1\nwarmup: 0\n";
  if (!calibration.empty()) s += "calibration: [" + calibration + "]\n";
  return s;
}

// `run --point`: the process that simulates one point (2 nodes x 2 GPUs), outputs in dir/point.
std::vector<std::string> run_point(const fs::path& scenario, const fs::path& dir, int nodes = 2) {
  return {kTool,
          "run",
          scenario.string(),
          "--point",
          std::to_string(nodes),
          "--point-gpus",
          "2",
          "--point-json",
          (dir / "point.json").string(),
          "--point-dir",
          (dir / "point").string()};
}

std::vector<SeedFile> tiny_scenario_seeds() {
  std::vector<SeedFile> seeds = fuzz::scenario_seeds();
  for (SeedFile& s : seeds) {
    s.text = tiny_scenario(s.text);
    s.variant += (s.variant.empty() ? "" : ", ") + std::string("2 nodes x 2 GPUs, 1 iteration");
  }
  return seeds;
}

}  // namespace

TEST_SUITE("slow") {
  TEST_CASE("scenario mutants through run") {
    fuzz_cli("cli-scenario", tiny_scenario_seeds(), 90,
             [](const std::string& mutant, const fs::path& dir, std::size_t i) {
               write(dir / "scenario.yaml", mutant);
               std::vector<std::vector<std::string>> c = {run_point(dir / "scenario.yaml", dir)};
               // One in three also through the whole run: the parent's checks and its children.
               if (i % 3 == 0)
                 c.push_back({kTool, "run", (dir / "scenario.yaml").string(), "-j", "1", "--out",
                              (dir / "run").string()});
               return c;
             });
  }

  TEST_CASE("platform mutants through describe and run") {
    const std::string gpus = fuzz::read_source_file("platforms/gpus.yaml");
    const std::vector<SeedFile> seeds = fuzz::platform_seeds();
    // Single-node machines (a cloud VM, one server) are simulated on their one node.
    std::vector<int> nodes;
    for (const SeedFile& f : seeds)
      nodes.push_back(
          std::min(2, platforms::parse_platform(f.text, f.name,
                                                std::string(SCALECAST_SOURCE_DIR) + "/platforms")
                          .total_nodes()));
    fuzz_cli("cli-platform", seeds, 60,
             [&](const std::string& mutant, const fs::path& dir, std::size_t i) {
               const int n = nodes[i % seeds.size()];
               write(dir / "platform.yaml", mutant);
               write(dir / "gpus.yaml", gpus);
               write(dir / "scenario.yaml",
                     scenario_with((dir / "platform.yaml").string(), "resnet50", "", n));
               return std::vector<std::vector<std::string>>{
                   {kTool, "describe", "platform", (dir / "platform.yaml").string()},
                   run_point(dir / "scenario.yaml", dir, n)};
             });
  }

  TEST_CASE("GPU catalog mutants through describe and run") {
    const std::string platform = fuzz::read_source_file("platforms/dgx1-v100.yaml");
    fuzz_cli("cli-gpu_catalog", fuzz::gpu_catalog_seeds(), 25,
             [&](const std::string& mutant, const fs::path& dir, std::size_t) {
               write(dir / "gpus.yaml", mutant);
               write(dir / "platform.yaml", platform);
               write(dir / "scenario.yaml",
                     scenario_with((dir / "platform.yaml").string(), "resnet50", ""));
               return std::vector<std::vector<std::string>>{
                   {kTool, "describe", "platform", (dir / "platform.yaml").string()},
                   run_point(dir / "scenario.yaml", dir)};
             });
  }

  TEST_CASE("model mutants through describe and run") {
    fuzz_cli("cli-model", fuzz::model_seeds(), 45,
             [](const std::string& mutant, const fs::path& dir, std::size_t) {
               write(dir / "model.yaml", mutant);
               write(dir / "scenario.yaml",
                     scenario_with("dgx1-v100", (dir / "model.yaml").string(), ""));
               return std::vector<std::vector<std::string>>{
                   {kTool, "describe", "model", (dir / "model.yaml").string()},
                   run_point(dir / "scenario.yaml", dir)};
             });
  }

  TEST_CASE("calibration mutants through describe and run") {
    fuzz_cli("cli-calibration", fuzz::calibration_seeds(), 35,
             [](const std::string& mutant, const fs::path& dir, std::size_t) {
               write(dir / "calibration.yaml", mutant);
               write(dir / "scenario.yaml",
                     scenario_with("dgx1-v100", "resnet50", (dir / "calibration.yaml").string()));
               return std::vector<std::vector<std::string>>{
                   {kTool, "describe", "calibration", (dir / "calibration.yaml").string()},
                   run_point(dir / "scenario.yaml", dir)};
             });
  }

  TEST_CASE("validation mutants through validate") {
    std::vector<SeedFile> seeds = fuzz::validation_seeds();
    seeds[0].text = fuzz::excerpt(fuzz::read_source_file("validation/public.yaml"), 2, 1);
    seeds[0].variant = "excerpt: first 2 items of each list";
    fuzz_cli("cli-validation", seeds, 30,
             [](const std::string& mutant, const fs::path& dir, std::size_t) {
               write(dir / "validation.yaml", mutant);
               return std::vector<std::vector<std::string>>{
                   {kTool, "validate", (dir / "validation.yaml").string(), "-j", "1", "--json",
                    (dir / "validate.json").string(), "--work-dir", (dir / "work").string()}};
             });
  }
}
