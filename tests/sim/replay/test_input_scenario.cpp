// Input pipeline from the scenario side: the `input:` keys, their errors (file:line:col and key),
// the summary.json block, same bytes from two runs, and the Summit ResNet-50 scaling with PFS vs
// NVMe (slow: whole-machine points).

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/config_error.hpp"
#include "platforms/platform.hpp"
#include "sim/scenario.hpp"

#include "tests/sim/replay/test_files.hpp"

using namespace scalecast::sim;
using scalecast::common::ConfigError;

using scalecast::sim::testing::kTool;
using scalecast::sim::testing::slurp;

namespace {

const char* kBase = R"(name: t
platform: summit
model: resnet50
nodes: 1
input:
  source: pfs
  stored_sample_size: 110KB
)";

std::string error_of(const std::string& text, std::vector<std::string> sets = {}) {
  try {
    load_scenario_text(text, "in.yaml", parse_overrides(sets));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// kBase with one line replaced.
std::string with(const std::string& from, const std::string& to) {
  std::string t = kBase;
  t.replace(t.find(from), from.size(), to);
  return t;
}

// ImageNet JPEGs as stored: image-net.org lists ILSVRC2012_img_train.tar (1,281,167 training
// images) as 138 GB, i.e. 108 KB per image (116 KB if that is GiB); 110 KB is taken.
const char* kImagenetJpeg = "110KB";

// Runs the default scenario at `nodes` with `source`, returns summary.json.
nlohmann::json run_default(const std::string& nodes, const std::string& source,
                           const std::filesystem::path& out) {
  const std::string cmd = kTool +
                          " --quiet run scenarios/summit-resnet50.yaml --set nodes=" + nodes +
                          " --set iterations=1 --set input.source=" + source +
                          " --set input.stored_sample_size=" + kImagenetJpeg + " -j 2 --out " +
                          out.string() + " > " + out.string() + ".txt";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return nlohmann::json::parse(slurp(out / "summary.json"));
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("input: scenario keys load with documented defaults") {
    const Scenario s = load_scenario_text(kBase, "in.yaml");
    CHECK(s.input.source == InputSource::kPfs);
    CHECK(s.input.stored_bytes_per_sample == 110e3);
    CHECK(s.input.prefetch_depth == kDefaultPrefetchDepth);
    CHECK(s.input.decode_samples_per_s == 0.0);
    CHECK(s.input.decode_cores == 0.0);  // resolved from the platform per point
    const Scenario d =
        load_scenario_text(kBase, "in.yaml",
                           parse_overrides({"input.decode_rate=800", "input.decode_cores=3",
                                            "input.prefetch_depth=4"}));
    CHECK(d.input.decode_samples_per_s == 800.0);
    CHECK(d.input.decode_cores == 3.0);
    CHECK(d.input.prefetch_depth == 4);
    const Scenario off =
        load_scenario_text(kBase, "in.yaml", parse_overrides({"input.prefetch=false"}));
    CHECK(off.input.prefetch_depth == 0);
    CHECK(!off.prefetch);
    const Scenario mem =
        load_scenario_text("platform: summit\nmodel: resnet50\nnodes: 1\n", "m.yaml");
    CHECK(mem.input.source == InputSource::kMemory);
    CHECK(!mem.input.staged());
  }

  TEST_CASE("input: scenario errors name the file line and key") {
    const std::string unknown = error_of(with("source: pfs", "source: tape"));
    INFO(unknown);
    CHECK(unknown.find("in.yaml:6:11: error: input.source") != std::string::npos);
    CHECK(unknown.find("memory, nvme, pfs") != std::string::npos);
    const std::string no_pfs = error_of(with("platform: summit", "platform: dgx1-v100"));
    INFO(no_pfs);
    CHECK(no_pfs.find("in.yaml:6:11: error: input.source") != std::string::npos);
    CHECK(no_pfs.find("dgx1-v100") != std::string::npos);
    CHECK(no_pfs.find("parallel file system") != std::string::npos);
    const std::string no_nvme =
        error_of(with("platform: summit", "platform: dgx1-v100"), {"input.source=nvme"});
    CHECK(no_nvme.find("NVMe") != std::string::npos);
    const std::string missing = error_of(with("  stored_sample_size: 110KB\n", ""));
    INFO(missing);
    CHECK(missing.find("in.yaml:6:") != std::string::npos);
    CHECK(missing.find("input.stored_sample_size") != std::string::npos);
    CHECK(missing.find("required") != std::string::npos);
    const std::string rate_line = error_of(std::string(kBase) + "  decode_rate: 0\n");
    INFO(rate_line);
    CHECK(rate_line.find("in.yaml:8:16: error: input.decode_rate") != std::string::npos);
    const std::string zero_size = error_of(kBase, {"input.stored_sample_size=0B"});
    CHECK(zero_size.find("input.stored_sample_size") != std::string::npos);
    const std::string bad_rate = error_of(kBase, {"input.decode_rate=-5"});
    INFO(bad_rate);
    CHECK(bad_rate.rfind("--set input.decode_rate=-5: error: ", 0) == 0);  // names the override
    CHECK(bad_rate.find("input.decode_rate") != std::string::npos);
    CHECK(bad_rate.find("from 0.001 to 1e+09") != std::string::npos);
    const std::string bad_cores =
        error_of(kBase, {"input.decode_rate=500", "input.decode_cores=0"});
    CHECK(bad_cores.find("input.decode_cores") != std::string::npos);
    CHECK(bad_cores.find("from 0.001 to 1e+06") != std::string::npos);
    // A denormal rate or core count passed "> 0" and SimGrid then aborted on an infinite sleep;
    // 1e-15 samples/s gave an iteration of 3.6e19 ms with no compute.
    for (const char* tiny : {"input.decode_rate=1e-310", "input.decode_rate=1e-15"}) {
      const std::string e = error_of(kBase, {tiny});
      INFO(e);
      CHECK(e.find("input.decode_rate: expected a number (samples/s per CPU core) from 0.001") !=
            std::string::npos);
    }
    CHECK(error_of(kBase, {"input.decode_rate=1", "input.decode_cores=1e-310"})
              .find("input.decode_cores: expected a number (CPU cores per GPU) from 0.001") !=
          std::string::npos);
    // A sample of a fraction of a byte is a typo, not a size.
    CHECK(error_of(kBase, {"input.sample_size=1e-300B"}).find("input.sample_size") !=
          std::string::npos);
    CHECK(error_of(kBase, {"input.stored_sample_size=0.5B"}).find("at least 1 B") !=
          std::string::npos);
    // 1.5B reached summary.json as 1.5 bytes per sample.
    CHECK(error_of(kBase, {"input.stored_sample_size=1.5B"})
              .find("input.stored_sample_size: expected a whole number of bytes, got \"1.5B\"") !=
          std::string::npos);
    CHECK(error_of(kBase, {"input.stored_sample_size=1.5KiB"}) == "no error");
    const std::string cores_alone = error_of(kBase, {"input.decode_cores=4"});
    CHECK(cores_alone.find("input.decode_cores") != std::string::npos);
    const std::string both = error_of(kBase, {"input.prefetch=false", "input.prefetch_depth=2"});
    CHECK(both.find("input.prefetch_depth") != std::string::npos);
    const std::string negative = error_of(kBase, {"input.prefetch_depth=-1"});
    CHECK(negative.find("input.prefetch_depth") != std::string::npos);
    CHECK(error_of(kBase, {"input.soruce=pfs"}).find("input.soruce") != std::string::npos);
  }

  TEST_CASE("input: a staged run writes the same bytes twice and reports its settings") {
    // PFS at wave fidelity: node 0's pipelines, node 1's mirror readers, the server actors.
    const auto base =
        std::filesystem::temp_directory_path() / ("scalecast-in-det-" + std::to_string(::getpid()));
    std::filesystem::create_directories(base);
    for (const char* run : {"a", "b"}) {
      const std::string cmd = kTool +
                              " --quiet run scenarios/summit-resnet50.yaml --set nodes=2 "
                              "--set fidelity=wave --set iterations=1 --set input.source=pfs --set "
                              "input.stored_sample_size=110KB --set input.decode_rate=100 -j 2 "
                              "--out " +
                              (base / run).string() + " > " + (base / run).string() + ".txt";
      REQUIRE(std::system(cmd.c_str()) == 0);
    }
    for (const char* f : {"summary.json", "trace.json", "ops.csv", "iterations.csv"}) {
      const std::string a = slurp(base / "a" / f), b = slurp(base / "b" / f);
      INFO(f << ": " << a.size() << " bytes");
      CHECK(!a.empty());
      CHECK(a == b);
    }
    CHECK(slurp(base / "a.txt") == slurp(base / "b.txt"));
    const auto summary = nlohmann::json::parse(slurp(base / "a" / "summary.json"));
    const auto& in = summary["input"];
    INFO(in.dump());
    CHECK(in["source"] == "pfs");
    CHECK(in["stored_sample_bytes"] == 110e3);
    CHECK(in["decode_rate_per_core"] == 100.0);
    CHECK(in["decode_cores"] == 7.0);  // Summit: 2 x 21 usable cores / 6 GPUs
    CHECK(in["prefetch_depth"] == 2);
    // 100 x 7 = 700 samples/s per GPU, slower than a V100 at batch 256 (256 / 0.253 s = 1,011/s):
    // decode-bound, the iteration is one decode, 256 / 700 = 0.366 s.
    const double t = summary["iteration_time_s"].get<double>();
    MESSAGE("decode-bound iteration expected " << 256.0 / 700.0 << " s, actual " << t << " s");
    CHECK(t == doctest::Approx(256.0 / 700.0).epsilon(1e-3));
    CHECK(summary["breakdown"]["io_stall_s"].get<double>() > 0.1);
    const std::string ops = slurp(base / "a" / "ops.csv");
    CHECK(ops.find(",decode,") != std::string::npos);
    CHECK(ops.find(",read,") != std::string::npos);
    const std::string iterations = slurp(base / "a" / "iterations.csv");
    INFO(iterations);
    CHECK(iterations.find(",read_s,decode_s\n") != std::string::npos);
    const std::string trace = slurp(base / "a" / "trace.json");
    CHECK(trace.find("gpu0/read") != std::string::npos);
    std::filesystem::remove_all(base);
  }
}

TEST_SUITE("slow") {
  TEST_CASE("input: Summit ResNet-50 on PFS stalls at scale and on NVMe does not") {
    const auto base = std::filesystem::temp_directory_path() /
                      ("scalecast-in-scale-" + std::to_string(::getpid()));
    std::filesystem::create_directories(base);
    const std::string nodes = "[1,64,512,1024,2048,3072,4096,4608]";
    const auto pfs = run_default(nodes, "pfs", base / "pfs");
    const auto nvme = run_default(nodes, "nvme", base / "nvme");
    MESSAGE("PFS (2.5 TB/s aggregate):\n" << slurp(base.string() + "/pfs.txt"));
    MESSAGE("node-local NVMe (5.5 GB/s per node):\n" << slurp(base.string() + "/nvme.txt"));
    double nic_factor = 1.0;
    for (const auto& rule : scalecast::platforms::load_platform("summit").network_model.factors)
      if (rule.link_class == "nic") nic_factor = rule.bandwidth_factor;
    const auto& pp = pfs["points"];
    const auto& np = nvme["points"];
    REQUIRE(pp.size() == 8);
    // The PFS delivers 2.5 TB/s times the calibrated network's bandwidth factor of the route (its
    // slowest link class is the NIC: 0.92 in platforms/summit.yaml). A point must stall exactly
    // when its demand at the rate it reaches on NVMe (no storage limit) exceeds that.
    const double delivered = 2.5e12 * nic_factor;
    int stalled = 0;
    for (std::size_t i = 0; i < pp.size(); ++i) {
      const int n = pp[i]["nodes"].get<int>();
      const double t = pp[i]["iteration_time_s"].get<double>();
      const double t_nvme = np[i]["iteration_time_s"].get<double>();
      // Demand: 6 GPUs x 256 x 110 KB per iteration per node.
      const double demand = n * 6 * 256 * 110e3 / t;
      const double demand_nvme = n * 6 * 256 * 110e3 / t_nvme;
      const double stall_pfs = pp[i]["breakdown"]["io_stall_s"].get<double>();
      const double stall_nvme = np[i]["breakdown"]["io_stall_s"].get<double>();
      MESSAGE(n << " nodes: PFS demand at the NVMe rate " << demand_nvme / 1e12
                << " TB/s, at the achieved rate " << demand / 1e12 << " TB/s; io_stall PFS "
                << stall_pfs << " s, NVMe " << stall_nvme << " s");
      CHECK(stall_nvme == 0.0);
      if (demand_nvme < 0.995 * delivered) CHECK(stall_pfs == 0.0);
      if (demand_nvme > 1.005 * delivered) {
        // The PFS caps the rate: the stall makes up the difference.
        ++stalled;
        CHECK(stall_pfs > 0.0);
        INFO("demand " << demand << " B/s, PFS delivers " << delivered << " B/s");
        CHECK(demand == doctest::Approx(delivered).epsilon(0.01));
      }
    }
    CHECK(stalled >= 1);  // the whole machine (4,608 nodes) outruns GPFS
    std::filesystem::remove_all(base);
  }
}
