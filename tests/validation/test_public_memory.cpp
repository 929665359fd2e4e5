// The memory check rejects no configuration that was measured running: every expressible point
// of the public validation set whose precision is stated fits its GPUs' memory by
// models/memory_estimate.hpp (the scenario the real predictor writes loads with the check on).
// Points of unknown precision are simulated as fp32 (FORMAT.md 5.6); CL-1 (ResNet-50 at batch
// 256 on a 16 GB V100, mixed precision by its throughput) would not fit in fp32, which is why
// the scenarios of such points, and only those, say memory_check: false.

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "common/config_error.hpp"
#include "sim/scenario.hpp"
#include "validation/predictor.hpp"
#include "validation/run_predictor.hpp"
#include "validation/validation_file.hpp"

using namespace scalecast::validation;

TEST_SUITE("unit") {
  TEST_CASE("every public validation point of stated precision fits its GPUs' memory") {
    const std::string path = std::string(SCALECAST_SOURCE_DIR) + "/validation/public.yaml";
    const ValidationFile file = load_validation_file(path);
    int checked = 0, unknown = 0;
    for (const ValidationPoint& p : file.points) {
      const Configuration c =
          configuration_of(p, std::filesystem::path(path).parent_path().string());
      try {
        check_expressible(c);
      } catch (const Unsupported&) {
        continue;  // not simulated, so not checked
      }
      const std::string yaml = scenario_yaml(c);
      CHECK((yaml.find("memory_check: false\n") != std::string::npos) ==
            (p.precision == "unknown"));
      if (p.precision == "unknown") {
        ++unknown;
        continue;
      }
      if (c.strategy != Strategy::kNone && c.strategy != Strategy::kAllreduce) continue;
      INFO(p.id);
      CHECK_NOTHROW(scalecast::sim::load_scenario_text(
          yaml, p.id + ".yaml", scalecast::sim::parse_overrides({"memory_check=true"})));
      ++checked;
    }
    MESSAGE("points checked: " << checked << ", of unknown precision: " << unknown);
    CHECK(checked >= 60);
  }
}
