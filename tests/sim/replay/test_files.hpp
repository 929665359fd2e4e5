#pragma once
// File and tool helpers shared by the replay tests that run `scalecast` or read its outputs.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace scalecast::sim::testing {

// A whole file's bytes ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The scalecast executable of this build tree.
inline const std::string kTool = std::string(SCALECAST_BINARY_DIR) + "/cli/scalecast";

}  // namespace scalecast::sim::testing
