#include "sim/input_pipeline.hpp"

namespace scalecast::sim {

std::string_view to_string(InputSource s) {
  switch (s) {
    case InputSource::kMemory:
      return "memory";
    case InputSource::kNvme:
      return "nvme";
    case InputSource::kPfs:
      return "pfs";
  }
  return "?";
}

std::optional<InputSource> parse_input_source(std::string_view text) {
  if (text == "memory") return InputSource::kMemory;
  if (text == "nvme") return InputSource::kNvme;
  if (text == "pfs") return InputSource::kPfs;
  return std::nullopt;
}

}  // namespace scalecast::sim
