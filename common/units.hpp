#pragma once
// Unit-bearing quantities. Every YAML quantity carries its unit in the value ("50GBps",
// "1.5us", "64MiB", "2TFLOPS", "95%"); this one parser turns it into an SI double (bytes,
// seconds, bytes/s, FLOP/s, a fraction) so no other code ever sees a unit suffix.
// Decimal prefixes are powers of 1000 (GB = 1e9 B), binary ones powers of 1024 (GiB = 2^30 B);
// a lower-case "b" is bits, an upper-case "B" bytes.

#include <stdexcept>
#include <string>
#include <string_view>

namespace scalecast::common {

enum class Quantity {
  kBandwidth,  // bytes per second: "50GBps", "12.5GB/s", "100Gbps", "25GiB/s"
  kSize,       // bytes: "64MiB", "1.6TB", "512B", "100Gb"
  kTime,       // seconds: "1.5us", "1.5µs", "3ms", "2s", "100ns", "2min", "1h"
  kFlopRate,   // FLOP per second: "2TFLOPS", "15.7TFLOP/s", "900GFLOPS"
  kFrequency,  // hertz: "1530MHz", "2.1GHz"
  kFraction,   // dimensionless in [0, 1]: "95%", or a bare number such as 0.95
  kRate,       // operations per second: "50000/s", "1.2M/s", "120kops"
};

// Thrown by parse_quantity; the message is the part after "key: " in a ConfigError, e.g.
// `expected a bandwidth like "50GBps", got "50"`.
class UnitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses `text` as a quantity of `kind`, returning the SI value. Throws UnitError when the
// number or the unit is malformed, the unit does not fit `kind`, or the value is negative.
double parse_quantity(std::string_view text, Quantity kind);

// Human name and an example of a quantity kind, for error messages and `describe` output.
std::string_view quantity_name(Quantity kind);
std::string_view quantity_example(Quantity kind);

// Formats an SI value back into a readable string with a unit ("50 GB/s", "1.5 us", "64 MiB").
// Used for tables; not guaranteed to round-trip through parse_quantity.
std::string format_quantity(double value_si, Quantity kind);

}  // namespace scalecast::common
