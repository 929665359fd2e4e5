#include <doctest/doctest.h>

#include <fmt/format.h>
#include <cmath>
#include <cstdint>

#include "common/config_node.hpp"

using scalecast::common::ConfigError;
using scalecast::common::ConfigNode;
using scalecast::common::Quantity;

namespace {

const char* kPlatform =
    "name: summit\n"         // line 1
    "node:\n"                // line 2
    "  nvlink:\n"            // line 3
    "    bandwidth: 50\n"    // line 4
    "    latency: 1.5us\n"   // line 5
    "  gpus: -6\n"           // line 6
    "  sockets: two\n"       // line 7
    "  rails: [1, 2]\n"      // line 8
    "network:\n"             // line 9
    "  topolgy: fat_tree\n"  // line 10
    "  levels: 3\n";         // line 11

ConfigNode doc() { return ConfigNode::load_string(kPlatform, "platforms/summit.yaml"); }

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("quantity with a missing unit points at the value") {
    CHECK(error_of([] {
            doc()
                .required("node")
                .required("nvlink")
                .required("bandwidth")
                .as_quantity(Quantity::kBandwidth);
          }) ==
          "platforms/summit.yaml:4:16: error: node.nvlink.bandwidth: expected a bandwidth like "
          "\"50GBps\", got \"50\" (the unit is missing)");
  }

  TEST_CASE("valid quantity converts to SI") {
    CHECK(doc().required("node").required("nvlink").required("latency").as_quantity(
              Quantity::kTime) == doctest::Approx(1.5e-6).scale(0.0));
  }

  TEST_CASE("missing key is reported at the parent map") {
    CHECK(error_of([] { doc().required("node").required("nvlink").required("bricks"); }) ==
          "platforms/summit.yaml:4:5: error: node.nvlink: missing required key 'bricks'");
  }

  TEST_CASE("missing top-level key is reported at the document start") {
    CHECK(error_of([] { doc().required("storage"); }) ==
          "platforms/summit.yaml:1:1: error: missing required key 'storage'");
  }

  TEST_CASE("unknown key suggests the closest known key") {
    CHECK(error_of([] {
            doc().required("network").check_keys({"topology", "levels", "radix"});
          }) ==
          "platforms/summit.yaml:10:3: error: network.topolgy: unknown key (did you mean "
          "'topology'?)");
  }

  TEST_CASE("unknown key without a close match lists the keys") {
    CHECK(error_of([] {
            doc().check_keys({"name", "node"});
          }) ==
          "platforms/summit.yaml:9:1: error: network: unknown key (expected one of: name, node)");
  }

  TEST_CASE("negative count") {
    CHECK(error_of([] { doc().required("node").required("gpus").as_count(); }) ==
          "platforms/summit.yaml:6:9: error: node.gpus: expected a non-negative count, got \"-6\"");
  }

  TEST_CASE("non-integer count") {
    CHECK(error_of([] { doc().required("node").required("sockets").as_count(); }) ==
          "platforms/summit.yaml:7:12: error: node.sockets: expected an integer, got \"two\"");
  }

  TEST_CASE("list where a scalar is expected") {
    CHECK(error_of([] { doc().required("node").required("rails").as_string(); }) ==
          "platforms/summit.yaml:8:10: error: node.rails: expected a scalar, got a list");
  }

  TEST_CASE("sequence items carry their index in the key path") {
    const auto rails = doc().required("node").required("rails").items();
    REQUIRE(rails.size() == 2);
    CHECK(rails[1].path() == "node.rails[1]");
    CHECK(rails[1].as_int() == 2);
    CHECK(error_of([&] { rails[0].as_bool(); }) ==
          "platforms/summit.yaml:8:11: error: node.rails[0]: expected true or false, got \"1\"");
  }

  TEST_CASE("map where a list is expected") {
    CHECK(error_of([] { doc().required("node").items(); }) ==
          "platforms/summit.yaml:3:3: error: node: expected a list");
  }

  TEST_CASE("duplicate keys are rejected") {
    auto d = ConfigNode::load_string("a: 1\nb: 2\na: 3\n", "dup.yaml");
    CHECK(error_of([&] { d.check_keys({"a", "b"}); }) == "dup.yaml:3:1: error: a: duplicate key");
  }

  TEST_CASE("YAML syntax errors carry the position") {
    CHECK(error_of([] {
            ConfigNode::load_string("a: [1, 2\nb: 3\n", "bad.yaml");
          }).rfind("bad.yaml:", 0) == 0);
    CHECK(error_of([] {
            ConfigNode::load_string("a: [1, 2\nb: 3\n", "bad.yaml");
          }).find("error: YAML syntax error") != std::string::npos);
  }

  TEST_CASE("missing file") {
    CHECK(error_of([] { ConfigNode::load_file("/nonexistent/x.yaml"); }) ==
          "/nonexistent/x.yaml: error: cannot open file: No such file or directory");
  }

  TEST_CASE("empty value where a quantity is expected") {
    auto d = ConfigNode::load_string("link:\n  bandwidth:\n", "e.yaml");
    CHECK(error_of([&] {
            d.required("link").required("bandwidth").as_quantity(Quantity::kBandwidth);
          }) == "e.yaml:2:3: error: link.bandwidth: expected a value, got nothing");
  }

  TEST_CASE("defaults apply only when the key is absent") {
    auto d = doc().required("network");
    CHECK(d.count_or("levels", 1) == 3);
    CHECK(d.count_or("radix", 36) == 36);
    CHECK(d.quantity_or("latency", Quantity::kTime, 1e-6) == doctest::Approx(1e-6).scale(0.0));
  }

  TEST_CASE("as_int_in reads integers as integers and states the range") {
    const auto at = [](const char* v) { return ConfigNode::load_string(v, "f.yaml"); };
    CHECK(at("42").as_int_in(0, 100) == 42);
    CHECK(at("+7").as_int_field(1, 10) == 7);
    CHECK(error_of([&] { at("4294967297").as_int_field(0, 1'000'000); }) ==
          "f.yaml:1:1: error: expected at most 1,000,000 (a whole number from 0 to 1,000,000), "
          "got 4294967297");
    CHECK(error_of([&] { at("-3").as_int_in(1, 10); }) ==
          "f.yaml:1:1: error: expected at least 1 (a whole number from 1 to 10), got -3");
    CHECK(error_of([&] { at("-99999999999999999999").as_int_in(1, 10); }) ==
          "f.yaml:1:1: error: expected at least 1 (a whole number from 1 to 10), got "
          "-99999999999999999999");
    CHECK(error_of([&] { at("99999999999999999999").as_int_in(1, 10); }) ==
          "f.yaml:1:1: error: expected at most 10 (a whole number from 1 to 10), got "
          "99999999999999999999");
    CHECK(error_of([&] { at("2.5").as_int_in(1, 10); }) ==
          "f.yaml:1:1: error: expected a whole number from 1 to 10, got \"2.5\"");
    CHECK(error_of([&] { at("1e3").as_int_in(1, 10); }) ==
          "f.yaml:1:1: error: expected a whole number from 1 to 10, got \"1e3\"");
  }

  TEST_CASE("format_count groups thousands") {
    CHECK(scalecast::common::format_count(0) == "0");
    CHECK(scalecast::common::format_count(999) == "999");
    CHECK(scalecast::common::format_count(1000000) == "1,000,000");
    CHECK(scalecast::common::format_count(-1234) == "-1,234");
    CHECK(scalecast::common::format_count(INT64_MIN) == "-9,223,372,036,854,775,808");
  }

  TEST_CASE("as_quantity_in states the physical range") {
    const auto at = [](const char* v) { return ConfigNode::load_string(v, "f.yaml"); };
    CHECK(at("10GBps").as_quantity_in(Quantity::kBandwidth, 1e3, 1e15) == 10e9);
    CHECK(error_of([&] { at("0GBps").as_quantity_in(Quantity::kBandwidth, 0.0, 1e15, true); }) ==
          "f.yaml:1:1: error: expected a bandwidth greater than 0 B/s and at most 1000 TB/s, got "
          "\"0GBps\"");
    CHECK(error_of([&] { at("2s").as_quantity_in(Quantity::kTime, 0.0, 1.0); }) ==
          "f.yaml:1:1: error: expected a time of at least 0 s and at most 1 s, got \"2s\"");
  }
}

TEST_SUITE("unit") {
  TEST_CASE("a second YAML document is an error at its ---, one document with markers loads") {
    // YAML::Load read the first document only: `nodes: [9999999]` after `---` was ignored.
    const auto load = [](const std::string& text) {
      return error_of([&] { (void)ConfigNode::load_string(text, "s.yaml"); });
    };
    const std::string expected =
        ": error: a second YAML document starts here; expected one document (nothing after its "
        "`---` would be read)";
    CHECK(load("nodes: [1]\n---\nnodes: [9999999]\n") == "s.yaml:2:1" + expected);
    CHECK(load("# head\n---\nnodes: [1]\n--- {nodes: [2]}\n") == "s.yaml:4:1" + expected);
    CHECK(load("nodes: [1]\n---\n") == "s.yaml:2:1" + expected);
    CHECK(load("nodes: [1]\n...\n---\nx: 1\n") == "s.yaml:3:1" + expected);
    CHECK(load("%YAML 1.2\n---\nnodes: [1]\n...\n") == "<no error>");
    CHECK(load("---\nname: |\n  ---\n  text\n") == "<no error>");
    CHECK(load("") == "<no error>");
    CHECK(ConfigNode::load_string("---\nnodes: 3\n", "s.yaml").required("nodes").as_int() == 3);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("a quoted string never closed is an error at its quote, closed ones load") {
    // yaml-cpp ended it at the end of the text: `name: "oops` as the last line was the name
    // "oops ", and followed by `model: x` it swallowed that line (then "missing model").
    const auto load = [](const std::string& text) {
      return error_of([&] { (void)ConfigNode::load_string(text, "q.yaml"); });
    };
    const std::string dq =
        ": error: YAML syntax error: this double-quoted string is never closed (expected a "
        "closing \" before the end of the file)";
    CHECK(load("name: \"oops\n") == "q.yaml:1:7" + dq);
    CHECK(load("name: \"oops\nmodel: x\n") == "q.yaml:1:7" + dq);
    CHECK(load("a: 1\nlist: [x, \"y\n") != "<no error>");
    CHECK(load("k: 'it''s\n")
              .find("q.yaml:1:4: error: YAML syntax error: this single-quoted "
                    "string is never closed") == 0);
    CHECK(load("name: \"a \\\" quote\"\nb: 'it''s'\n\"key\": \"v\"\n") == "<no error>");
    CHECK(ConfigNode::load_string("b: 'it''s'\n", "q.yaml").required("b").as_string() == "it's");
    // Aliases are walked once: a billion laughs of quoted scalars stays fast.
    std::string laughs = "a: &a [\"lol\", \"lol\"]\n";
    for (char c = 'b'; c <= 'z'; ++c)
      laughs +=
          fmt::format("{}: &{} [*{}, *{}, *{}, *{}]\n", c, c, static_cast<char>(c - 1),
                      static_cast<char>(c - 1), static_cast<char>(c - 1), static_cast<char>(c - 1));
    CHECK(load(laughs) == "<no error>");
  }
}

TEST_SUITE("unit") {
  TEST_CASE("a negative zero number or quantity is read as zero, never -0") {
    // `start: -0s` printed "start_s": -0.0 in summary.json and -0.000 in the table.
    const ConfigNode d = ConfigNode::load_string("a: -0\nb: -0s\nc: -0.0e5\n", "z.yaml");
    for (const double v :
         {d.required("a").as_double(), d.required("b").as_quantity(Quantity::kTime),
          d.required("c").as_double()}) {
      CHECK(v == 0.0);
      CHECK_FALSE(std::signbit(v));
    }
  }
}
