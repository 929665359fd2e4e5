#include "common/units.hpp"

#include <fmt/format.h>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

namespace scalecast::common {
namespace {

struct UnitSpec {
  std::string_view suffix;
  double factor;
};

// Suffix tables. Matching is exact and case-sensitive because "b" (bit) and "B" (byte) differ.
constexpr std::array kBandwidthUnits{
    UnitSpec{"Bps", 1.0},
    UnitSpec{"B/s", 1.0},
    UnitSpec{"kBps", 1e3},
    UnitSpec{"kB/s", 1e3},
    UnitSpec{"KBps", 1e3},
    UnitSpec{"KB/s", 1e3},
    UnitSpec{"MBps", 1e6},
    UnitSpec{"MB/s", 1e6},
    UnitSpec{"GBps", 1e9},
    UnitSpec{"GB/s", 1e9},
    UnitSpec{"TBps", 1e12},
    UnitSpec{"TB/s", 1e12},
    UnitSpec{"KiBps", 1024.0},
    UnitSpec{"KiB/s", 1024.0},
    UnitSpec{"MiBps", 1048576.0},
    UnitSpec{"MiB/s", 1048576.0},
    UnitSpec{"GiBps", 1073741824.0},
    UnitSpec{"GiB/s", 1073741824.0},
    UnitSpec{"TiBps", 1099511627776.0},
    UnitSpec{"TiB/s", 1099511627776.0},
    UnitSpec{"bps", 0.125},
    UnitSpec{"b/s", 0.125},
    UnitSpec{"kbps", 125.0},
    UnitSpec{"kb/s", 125.0},
    UnitSpec{"Kbps", 125.0},
    UnitSpec{"Mbps", 1.25e5},
    UnitSpec{"Mb/s", 1.25e5},
    UnitSpec{"Gbps", 1.25e8},
    UnitSpec{"Gb/s", 1.25e8},
    UnitSpec{"Tbps", 1.25e11},
    UnitSpec{"Tb/s", 1.25e11},
};
constexpr std::array kSizeUnits{
    UnitSpec{"B", 1.0},
    UnitSpec{"kB", 1e3},
    UnitSpec{"KB", 1e3},
    UnitSpec{"MB", 1e6},
    UnitSpec{"GB", 1e9},
    UnitSpec{"TB", 1e12},
    UnitSpec{"PB", 1e15},
    UnitSpec{"KiB", 1024.0},
    UnitSpec{"MiB", 1048576.0},
    UnitSpec{"GiB", 1073741824.0},
    UnitSpec{"TiB", 1099511627776.0},
    UnitSpec{"PiB", 1125899906842624.0},
    UnitSpec{"b", 0.125},
    UnitSpec{"kb", 125.0},
    UnitSpec{"Mb", 1.25e5},
    UnitSpec{"Gb", 1.25e8},
    UnitSpec{"Tb", 1.25e11},
};
constexpr std::array kTimeUnits{
    UnitSpec{"s", 1.0},   UnitSpec{"ms", 1e-3},  UnitSpec{"us", 1e-6},  UnitSpec{"\xC2\xB5s", 1e-6},
    UnitSpec{"ns", 1e-9}, UnitSpec{"ps", 1e-12}, UnitSpec{"min", 60.0}, UnitSpec{"h", 3600.0},
};
constexpr std::array kFlopUnits{
    UnitSpec{"FLOPS", 1.0},    UnitSpec{"FLOP/s", 1.0},  UnitSpec{"kFLOPS", 1e3},
    UnitSpec{"kFLOP/s", 1e3},  UnitSpec{"MFLOPS", 1e6},  UnitSpec{"MFLOP/s", 1e6},
    UnitSpec{"GFLOPS", 1e9},   UnitSpec{"GFLOP/s", 1e9}, UnitSpec{"TFLOPS", 1e12},
    UnitSpec{"TFLOP/s", 1e12}, UnitSpec{"PFLOPS", 1e15}, UnitSpec{"PFLOP/s", 1e15},
};
constexpr std::array kFrequencyUnits{
    UnitSpec{"Hz", 1.0},
    UnitSpec{"kHz", 1e3},
    UnitSpec{"MHz", 1e6},
    UnitSpec{"GHz", 1e9},
};
constexpr std::array kFractionUnits{UnitSpec{"%", 0.01}, UnitSpec{"", 1.0}};
constexpr std::array kRateUnits{
    UnitSpec{"/s", 1.0},  UnitSpec{"k/s", 1e3},  UnitSpec{"M/s", 1e6},
    UnitSpec{"ops", 1.0}, UnitSpec{"kops", 1e3}, UnitSpec{"Mops", 1e6},
};

template <std::size_t N>
const UnitSpec* find_unit(const std::array<UnitSpec, N>& table, std::string_view suffix) {
  for (const auto& u : table) {
    if (u.suffix == suffix) return &u;
  }
  return nullptr;
}

const UnitSpec* lookup(Quantity kind, std::string_view suffix) {
  switch (kind) {
    case Quantity::kBandwidth:
      return find_unit(kBandwidthUnits, suffix);
    case Quantity::kSize:
      return find_unit(kSizeUnits, suffix);
    case Quantity::kTime:
      return find_unit(kTimeUnits, suffix);
    case Quantity::kFlopRate:
      return find_unit(kFlopUnits, suffix);
    case Quantity::kFrequency:
      return find_unit(kFrequencyUnits, suffix);
    case Quantity::kFraction:
      return find_unit(kFractionUnits, suffix);
    case Quantity::kRate:
      return find_unit(kRateUnits, suffix);
  }
  return nullptr;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void fail(Quantity kind, std::string_view text) {
  throw UnitError(fmt::format("expected {} like \"{}\", got \"{}\"", quantity_name(kind),
                              quantity_example(kind), text));
}

}  // namespace

std::string_view quantity_name(Quantity kind) {
  switch (kind) {
    case Quantity::kBandwidth:
      return "a bandwidth";
    case Quantity::kSize:
      return "a size";
    case Quantity::kTime:
      return "a time";
    case Quantity::kFlopRate:
      return "a FLOP rate";
    case Quantity::kFrequency:
      return "a frequency";
    case Quantity::kFraction:
      return "a fraction";
    case Quantity::kRate:
      return "an operation rate";
  }
  return "a quantity";
}

std::string_view quantity_example(Quantity kind) {
  switch (kind) {
    case Quantity::kBandwidth:
      return "50GBps";
    case Quantity::kSize:
      return "64MiB";
    case Quantity::kTime:
      return "1.5us";
    case Quantity::kFlopRate:
      return "15.7TFLOPS";
    case Quantity::kFrequency:
      return "1530MHz";
    case Quantity::kFraction:
      return "95%";
    case Quantity::kRate:
      return "50000/s";
  }
  return "";
}

double parse_quantity(std::string_view text, Quantity kind) {
  const std::string_view s = trim(text);
  // Split into the longest prefix that is a number and the rest, which must be a unit.
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  std::size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  }
  if (digits == 0) fail(kind, text);
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    std::size_t exp_digits = 0;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j, ++exp_digits;
    if (exp_digits > 0) i = j;  // "2e" is not an exponent; leave it to the unit check
  }
  const std::string_view number = s.substr(0, i);
  const std::string_view suffix = trim(s.substr(i));

  double value = 0.0;
  const char* begin = number.data() + (number.front() == '+' ? 1 : 0);
  const auto [ptr, ec] = std::from_chars(begin, number.data() + number.size(), value);
  if (ec != std::errc() || ptr != number.data() + number.size() || !std::isfinite(value)) {
    fail(kind, text);
  }

  const UnitSpec* unit = lookup(kind, suffix);
  if (unit == nullptr) {
    if (suffix.empty()) {
      throw UnitError(fmt::format("expected {} like \"{}\", got \"{}\" (the unit is missing)",
                                  quantity_name(kind), quantity_example(kind), text));
    }
    throw UnitError(fmt::format("expected {} like \"{}\", got \"{}\" (unknown unit \"{}\")",
                                quantity_name(kind), quantity_example(kind), text, suffix));
  }
  if (value < 0.0) {
    throw UnitError(fmt::format("expected a non-negative {}, got \"{}\"",
                                quantity_name(kind).substr(quantity_name(kind).find(' ') + 1),
                                text));
  }
  const double si = value * unit->factor;
  if (kind == Quantity::kFraction && si > 1.0) {
    throw UnitError(fmt::format("expected a fraction between 0% and 100%, got \"{}\"", text));
  }
  return si;
}

std::string format_quantity(double v, Quantity kind) {
  struct Step {
    double factor;
    std::string_view unit;
  };
  auto pick = [v](std::initializer_list<Step> steps) {
    Step chosen = *steps.begin();
    for (const auto& st : steps) {
      if (std::fabs(v) >= st.factor) chosen = st;
    }
    return fmt::format("{:.4g} {}", v / chosen.factor, chosen.unit);
  };
  switch (kind) {
    case Quantity::kBandwidth:
      return pick({{1.0, "B/s"}, {1e3, "kB/s"}, {1e6, "MB/s"}, {1e9, "GB/s"}, {1e12, "TB/s"}});
    case Quantity::kSize:
      return pick({{1.0, "B"},
                   {1024.0, "KiB"},
                   {1048576.0, "MiB"},
                   {1073741824.0, "GiB"},
                   {1099511627776.0, "TiB"}});
    case Quantity::kTime:
      if (v == 0.0) return "0 s";
      return pick({{1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1.0, "s"}});
    case Quantity::kFlopRate:
      return pick({{1.0, "FLOP/s"}, {1e9, "GFLOP/s"}, {1e12, "TFLOP/s"}, {1e15, "PFLOP/s"}});
    case Quantity::kFrequency:
      return pick({{1.0, "Hz"}, {1e6, "MHz"}, {1e9, "GHz"}});
    case Quantity::kFraction:
      return fmt::format("{:.4g}%", v * 100.0);
    case Quantity::kRate:
      return pick({{1.0, "/s"}, {1e3, "k/s"}, {1e6, "M/s"}});
  }
  return fmt::format("{}", v);
}

}  // namespace scalecast::common
