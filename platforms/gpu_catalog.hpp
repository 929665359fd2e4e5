#pragma once
// The GPU catalog: every GPU model scalecast knows, by key ("v100-sxm2"), with its datasheet
// peaks, memory and links (platforms/gpus.yaml; sources in docs/sources.md).
// Platform files name a catalog key per node type; a platform may add its own entries.

#include <map>
#include <string>
#include <vector>

#include "common/config_node.hpp"
#include "platforms/gpu_spec.hpp"

namespace scalecast::platforms {

class GpuCatalog {
 public:
  // Loads a catalog file (a map of key -> GPU entry). Throws common::ConfigError.
  static GpuCatalog load_file(const std::string& path, const std::string& display_name = "");
  // Adds the entries of a YAML map node (e.g. a platform's own `gpus:` section).
  void add_entries(const common::ConfigNode& map);

  bool contains(const std::string& key) const { return specs_.count(key) != 0; }
  const GpuSpec& at(const std::string& key) const;
  std::vector<std::string> keys() const;

 private:
  std::map<std::string, GpuSpec> specs_;
};

// Parses one catalog entry (keys: fp64, fp32, fp16, tensor_fp16, ...).
GpuSpec parse_gpu_spec(const std::string& key, const common::ConfigNode& node);

}  // namespace scalecast::platforms
