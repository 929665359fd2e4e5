// Regression tests for the failures the fuzz property test found, each reduced to the smallest
// input that showed it (the fuzz case that found it is named in the comment).
#include <doctest/doctest.h>

#include <string>

#include "common/config_error.hpp"
#include "sim/scenario.hpp"

using namespace scalecast;

namespace {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const common::ConfigError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a ConfigError: ") + e.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("unit") {
  // scenario case 70 (seed 20261203): `platform: 50 Gbps` with `input.source: pfs` gave
  // "50 Gbps: error: no platform named ..." with no line: the error of a file that does not
  // exist is now the key's.
  TEST_CASE("a storage source on a platform that does not exist is located at the platform key") {
    const std::string text =
        "platform: no-such-machine\n"
        "model: resnet50\n"
        "nodes: 1\n"
        "input:\n"
        "  source: pfs\n"
        "  stored_sample_size: 110KB\n";
    const std::string e = error_of([&] { sim::load_scenario_text(text, "s.yaml"); });
    INFO(e);
    CHECK(e.rfind("s.yaml:1:11: error: platform: no platform named 'no-such-machine'", 0) == 0);
  }

  // The same path through seq_len, whose check loads the model: an unknown zoo name escaped as
  // std::invalid_argument (exit 4 from the command line).
  TEST_CASE("seq_len with a model that does not exist is located at the model key") {
    const std::string text =
        "platform: dgx-a100-superpod\n"
        "model: bert_largest\n"
        "nodes: 1\n"
        "seq_len: 128\n";
    const std::string e = error_of([&] { sim::load_scenario_text(text, "s.yaml"); });
    INFO(e);
    CHECK(e.rfind("s.yaml:2:8: error: model: unknown model 'bert_largest'", 0) == 0);
  }
}

TEST_SUITE("unit") {
  // cli-scenario case 0 (seed 20261203): `framework_efficiency: 4.9e-324` (the smallest double)
  // passed the loader, made every op infinitely long, and SimGrid aborted (SIGABRT, no message).
  TEST_CASE("framework_efficiency outside 0.001..100 is an error at its key") {
    for (const std::string bad : {"4.9e-324", "1e-300", "0.0009", "100.5", "1e300", "0"}) {
      const std::string text =
          "platform: dgx1-v100\nmodel: resnet50\nnodes: 1\n"
          "framework_efficiency: " +
          bad + "\n";
      const std::string e = error_of([&] { sim::load_scenario_text(text, "s.yaml"); });
      INFO(e);
      CHECK(e ==
            "s.yaml:4:23: error: framework_efficiency: expected a positive number from 0.001 "
            "to 100 (a time divisor), got " +
                bad);
    }
    const std::string ok =
        "platform: dgx1-v100\nmodel: resnet50\nnodes: 1\n"
        "framework_efficiency: 1.1515\n";
    CHECK(sim::load_scenario_text(ok, "s.yaml").framework_efficiency == doctest::Approx(1.1515));
  }
}
