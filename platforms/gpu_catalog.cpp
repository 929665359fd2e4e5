#include "platforms/gpu_catalog.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace scalecast::platforms {

using common::ConfigNode;
using common::Quantity;

GpuSpec parse_gpu_spec(const std::string& key, const ConfigNode& node) {
  node.check_keys({"fp64", "fp32", "fp16", "tensor_fp16", "tensor_bf16", "tensor_tf32",
                   "tensor_fp8", "memory", "memory_bandwidth", "nvlink", "host_link"});
  GpuSpec g;
  g.name = key;
  g.fp64_flops = node.required("fp64").as_quantity(Quantity::kFlopRate);
  g.fp32_flops = node.required("fp32").as_quantity(Quantity::kFlopRate);
  g.fp16_flops = node.quantity_or("fp16", Quantity::kFlopRate, 0.0);
  g.tensor_fp16_flops = node.quantity_or("tensor_fp16", Quantity::kFlopRate, 0.0);
  g.tensor_bf16_flops = node.quantity_or("tensor_bf16", Quantity::kFlopRate, 0.0);
  g.tensor_tf32_flops = node.quantity_or("tensor_tf32", Quantity::kFlopRate, 0.0);
  g.tensor_fp8_flops = node.quantity_or("tensor_fp8", Quantity::kFlopRate, 0.0);
  g.memory_bytes = node.required("memory").as_quantity(Quantity::kSize);
  g.memory_bandwidth = node.required("memory_bandwidth").as_quantity(Quantity::kBandwidth);
  if (auto nv = node.optional("nvlink")) {
    nv->check_keys({"generation", "links", "link_bandwidth"});
    g.nvlink_generation = nv->required("generation").as_string();
    g.nvlink_links = static_cast<int>(nv->required("links").as_count());
    g.nvlink_link_bandwidth = nv->required("link_bandwidth").as_quantity(Quantity::kBandwidth);
  }
  g.host_link = node.required("host_link").as_string();
  return g;
}

GpuCatalog GpuCatalog::load_file(const std::string& path, const std::string& display_name) {
  GpuCatalog catalog;
  const ConfigNode root = ConfigNode::load_file(path, display_name);
  catalog.add_entries(root.required("gpus"));
  return catalog;
}

void GpuCatalog::add_entries(const ConfigNode& map) {
  if (!map.is_map()) map.fail("expected a map of GPU key -> GPU entry");
  for (const auto& [key, node] : map.entries()) specs_[key] = parse_gpu_spec(key, node);
}

const GpuSpec& GpuCatalog::at(const std::string& key) const {
  auto it = specs_.find(key);
  if (it == specs_.end()) throw std::out_of_range(fmt::format("unknown GPU type '{}'", key));
  return it->second;
}

std::vector<std::string> GpuCatalog::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : specs_) out.push_back(k);
  return out;
}

}  // namespace scalecast::platforms
