#include <doctest/doctest.h>

#include "common/units.hpp"

using scalecast::common::parse_quantity;
using scalecast::common::Quantity;
using scalecast::common::UnitError;

namespace {

void check(const char* text, Quantity kind, double expected) {
  INFO("text: " << text);
  const double actual = parse_quantity(text, kind);
  CHECK(actual == doctest::Approx(expected).epsilon(1e-12));
}

std::string error_of(const char* text, Quantity kind) {
  try {
    parse_quantity(text, kind);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("bandwidth forms in bytes and bits with decimal and binary prefixes") {
    check("50GBps", Quantity::kBandwidth, 50e9);
    check("12.5GB/s", Quantity::kBandwidth, 12.5e9);
    check("100Gbps", Quantity::kBandwidth, 12.5e9);
    check("100Gb/s", Quantity::kBandwidth, 12.5e9);
    check("25 GiB/s", Quantity::kBandwidth, 25.0 * 1073741824.0);
    check("800MBps", Quantity::kBandwidth, 800e6);
    check("1.5TB/s", Quantity::kBandwidth, 1.5e12);
    check("3TBps", Quantity::kBandwidth, 3e12);
    check("1kBps", Quantity::kBandwidth, 1e3);
    check("1KB/s", Quantity::kBandwidth, 1e3);
    check("4KiBps", Quantity::kBandwidth, 4096.0);
    check("2MiB/s", Quantity::kBandwidth, 2.0 * 1048576.0);
    check("1TiBps", Quantity::kBandwidth, 1099511627776.0);
    check("8bps", Quantity::kBandwidth, 1.0);
    check("8kbps", Quantity::kBandwidth, 1000.0);
    check("400Mbps", Quantity::kBandwidth, 50e6);
    check("1.6Tbps", Quantity::kBandwidth, 200e9);
    check("10Bps", Quantity::kBandwidth, 10.0);
  }

  TEST_CASE("size forms") {
    check("64MiB", Quantity::kSize, 64.0 * 1048576.0);
    check("1.6TB", Quantity::kSize, 1.6e12);
    check("16GB", Quantity::kSize, 16e9);
    check("16GiB", Quantity::kSize, 16.0 * 1073741824.0);
    check("512B", Quantity::kSize, 512.0);
    check("4KiB", Quantity::kSize, 4096.0);
    check("4kB", Quantity::kSize, 4000.0);
    check("4KB", Quantity::kSize, 4000.0);
    check("250PB", Quantity::kSize, 250e15);
    check("1PiB", Quantity::kSize, 1125899906842624.0);
    check("2TiB", Quantity::kSize, 2.0 * 1099511627776.0);
    check("8b", Quantity::kSize, 1.0);
    check("100Gb", Quantity::kSize, 12.5e9);
    check("1e3B", Quantity::kSize, 1000.0);
    check("  7MB  ", Quantity::kSize, 7e6);
  }

  TEST_CASE("time forms") {
    check("1.5us", Quantity::kTime, 1.5e-6);
    check("1.5\xC2\xB5s", Quantity::kTime, 1.5e-6);
    check("3ms", Quantity::kTime, 3e-3);
    check("2s", Quantity::kTime, 2.0);
    check("100ns", Quantity::kTime, 100e-9);
    check("5ps", Quantity::kTime, 5e-12);
    check("2min", Quantity::kTime, 120.0);
    check("1h", Quantity::kTime, 3600.0);
    check(".5s", Quantity::kTime, 0.5);
    check("0s", Quantity::kTime, 0.0);
  }

  TEST_CASE("FLOP rate and frequency and fraction and operation rate forms") {
    check("2TFLOPS", Quantity::kFlopRate, 2e12);
    check("15.7TFLOP/s", Quantity::kFlopRate, 15.7e12);
    check("900GFLOPS", Quantity::kFlopRate, 900e9);
    check("1.2PFLOPS", Quantity::kFlopRate, 1.2e15);
    check("3MFLOP/s", Quantity::kFlopRate, 3e6);
    check("5kFLOPS", Quantity::kFlopRate, 5e3);
    check("7FLOPS", Quantity::kFlopRate, 7.0);
    check("1530MHz", Quantity::kFrequency, 1530e6);
    check("2.1GHz", Quantity::kFrequency, 2.1e9);
    check("60Hz", Quantity::kFrequency, 60.0);
    check("95%", Quantity::kFraction, 0.95);
    check("100%", Quantity::kFraction, 1.0);
    check("0.8", Quantity::kFraction, 0.8);
    check("50000/s", Quantity::kRate, 50000.0);
    check("1.2M/s", Quantity::kRate, 1.2e6);
    check("120kops", Quantity::kRate, 120e3);
  }

  TEST_CASE("malformed quantities give the exact expectation") {
    CHECK(error_of("50", Quantity::kBandwidth) ==
          "expected a bandwidth like \"50GBps\", got \"50\" (the unit is missing)");
    CHECK(error_of("50GBs", Quantity::kBandwidth) ==
          "expected a bandwidth like \"50GBps\", got \"50GBs\" (unknown unit \"GBs\")");
    CHECK(error_of("GBps", Quantity::kBandwidth) ==
          "expected a bandwidth like \"50GBps\", got \"GBps\"");
    CHECK(error_of("", Quantity::kSize) == "expected a size like \"64MiB\", got \"\"");
    CHECK(error_of("64MiB", Quantity::kTime) ==
          "expected a time like \"1.5us\", got \"64MiB\" (unknown unit \"MiB\")");
    CHECK(error_of("-3us", Quantity::kTime) == "expected a non-negative time, got \"-3us\"");
    CHECK(error_of("1.2.3GB", Quantity::kSize) ==
          "expected a size like \"64MiB\", got \"1.2.3GB\" (unknown unit \".3GB\")");
    CHECK(error_of("150%", Quantity::kFraction) ==
          "expected a fraction between 0% and 100%, got \"150%\"");
    CHECK(error_of("2 TFLOPs", Quantity::kFlopRate) ==
          "expected a FLOP rate like \"15.7TFLOPS\", got \"2 TFLOPs\" (unknown unit \"TFLOPs\")");
    CHECK(error_of("1530mhz", Quantity::kFrequency) ==
          "expected a frequency like \"1530MHz\", got \"1530mhz\" (unknown unit \"mhz\")");
    CHECK(error_of("abc", Quantity::kRate) ==
          "expected an operation rate like \"50000/s\", got \"abc\"");
    CHECK(error_of("1e400GB", Quantity::kSize) ==
          "expected a size like \"64MiB\", got \"1e400GB\"");
    CHECK(error_of("-5GBps", Quantity::kBandwidth) ==
          "expected a non-negative bandwidth, got \"-5GBps\"");
  }

  TEST_CASE("format_quantity picks a readable unit") {
    using scalecast::common::format_quantity;
    CHECK(format_quantity(50e9, Quantity::kBandwidth) == "50 GB/s");
    CHECK(format_quantity(64.0 * 1048576.0, Quantity::kSize) == "64 MiB");
    CHECK(format_quantity(1.5e-6, Quantity::kTime) == "1.5 us");
    CHECK(format_quantity(0.95, Quantity::kFraction) == "95%");
  }
}
