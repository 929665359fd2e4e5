#include <fmt/format.h>

#include "cli/describe.hpp"
#include "common/units.hpp"

namespace scalecast::cli {

int describe_units() {
  using common::Quantity;
  struct Row {
    Quantity kind;
    const char* suffixes;
  };
  const Row rows[] = {
      {Quantity::kBandwidth,
       "Bps B/s kBps KBps MBps GBps TBps (and /s forms), KiBps..TiBps, bps kbps Mbps Gbps Tbps "
       "(bits)"},
      {Quantity::kSize, "B kB KB MB GB TB PB, KiB MiB GiB TiB PiB, b kb Mb Gb Tb (bits)"},
      {Quantity::kTime, "s ms us µs ns ps min h"},
      {Quantity::kFlopRate, "FLOPS FLOP/s with k M G T P prefixes"},
      {Quantity::kFrequency, "Hz kHz MHz GHz"},
      {Quantity::kFraction, "95% or a bare number in [0, 1]"},
      {Quantity::kRate, "/s k/s M/s ops kops Mops"},
  };
  fmt::print("{:<20} {:<12} {}\n", "quantity", "example", "accepted suffixes");
  for (const auto& r : rows) {
    fmt::print("{:<20} {:<12} {}\n", common::quantity_name(r.kind),
               common::quantity_example(r.kind), r.suffixes);
  }
  fmt::print(
      "\nDecimal prefixes are powers of 1000 (GB = 1e9 B), binary ones powers of 1024 "
      "(GiB = 2^30 B);\n'b' is a bit, 'B' a byte. Values are converted to SI (bytes, "
      "seconds, bytes/s, FLOP/s).\n");
  return 0;
}

}  // namespace scalecast::cli
