#include "platforms/gpu_catalog.hpp"

#include <fmt/format.h>
#include <stdexcept>

#include "platforms/loader_parts.hpp"

namespace scalecast::platforms {

using common::ConfigNode;
using common::Quantity;

GpuSpec parse_gpu_spec(const std::string& key, const ConfigNode& node) {
  node.check_keys({"fp64", "fp32", "fp16", "tensor_fp16", "tensor_bf16", "tensor_tf32",
                   "tensor_fp8", "memory", "memory_bandwidth", "nvlink", "host_link",
                   "calibration_key", "sms"});
  GpuSpec g;
  g.name = key;
  // Peaks: positive and below 1 EFLOP/s; an optional peak may be absent (0: no such units).
  const auto flops = [](const ConfigNode& n) {
    return n.as_quantity_in(Quantity::kFlopRate, 0.0, detail::kMaxFlops, /*lo_open=*/true);
  };
  const auto flops_or = [&](const char* field) {
    const auto v = node.optional(field);
    return v ? flops(*v) : 0.0;
  };
  g.fp64_flops = flops(node.required("fp64"));
  g.fp32_flops = flops(node.required("fp32"));
  g.fp16_flops = flops_or("fp16");
  g.tensor_fp16_flops = flops_or("tensor_fp16");
  g.tensor_bf16_flops = flops_or("tensor_bf16");
  g.tensor_tf32_flops = flops_or("tensor_tf32");
  g.tensor_fp8_flops = flops_or("tensor_fp8");
  // Device memory: at most 100 TB (the largest GPUs have 0.2 TB).
  g.memory_bytes = node.required("memory").as_quantity_in(Quantity::kSize, 0.0, 1e14, true);
  g.memory_bandwidth = detail::bandwidth(node.required("memory_bandwidth"));
  if (auto nv = node.optional("nvlink")) {
    nv->check_keys({"generation", "links", "link_bandwidth"});
    g.nvlink_generation = nv->required("generation").as_string();
    g.nvlink_links = detail::count_in(nv->required("links"), 0, detail::kMaxPartsPerNode);
    g.nvlink_link_bandwidth = detail::bandwidth(nv->required("link_bandwidth"));
  }
  // Optional: up to 100,000 (the largest GPUs have a few hundred).
  if (auto sms = node.optional("sms")) g.sms = detail::count_in(*sms, 1, 100000);
  const ConfigNode host = node.required("host_link");
  g.host_link = host.as_string();
  // "memory": the device is the host (a CPU calibrated as the compute device); its copies run at
  // its own memory_bandwidth (calibration's datasheet tier).
  if (g.host_link != "memory" && !(host_link_bandwidth(g.host_link) > 0.0))
    host.fail(fmt::format("unknown host link '{}' (known: {}, memory)", g.host_link,
                          fmt::join(host_link_names(), ", ")));
  if (auto ck = node.optional("calibration_key")) {
    g.calibration_key = ck->as_string();
    if (g.calibration_key.empty() || g.calibration_key == key)
      ck->fail(
          fmt::format("expected the key of another catalog GPU, got \"{}\"", g.calibration_key));
  }
  return g;
}

namespace {

// Why `g` may not take `source`'s kernel measurements: measured times carry over only between
// parts whose every peak and memory bandwidth are equal (the same silicon at the same clocks).
std::string calibration_mismatch(const GpuSpec& g, const GpuSpec& source) {
  const std::pair<const char*, double GpuSpec::*> fields[] = {
      {"fp64", &GpuSpec::fp64_flops},
      {"fp32", &GpuSpec::fp32_flops},
      {"fp16", &GpuSpec::fp16_flops},
      {"tensor_fp16", &GpuSpec::tensor_fp16_flops},
      {"tensor_bf16", &GpuSpec::tensor_bf16_flops},
      {"tensor_tf32", &GpuSpec::tensor_tf32_flops},
      {"tensor_fp8", &GpuSpec::tensor_fp8_flops},
      {"memory_bandwidth", &GpuSpec::memory_bandwidth}};
  for (const auto& [field, member] : fields)
    if (g.*member != source.*member)
      return fmt::format("{} is {:g} here and {:g} on {}", field, g.*member, source.*member,
                         source.name);
  return {};
}

}  // namespace

GpuCatalog GpuCatalog::load_file(const std::string& path, const std::string& display_name) {
  GpuCatalog catalog;
  const ConfigNode root = ConfigNode::load_file(path, display_name);
  catalog.add_entries(root.required("gpus"));
  return catalog;
}

void GpuCatalog::add_entries(const ConfigNode& map) {
  if (!map.is_map()) map.fail("expected a map of GPU key -> GPU entry");
  for (const auto& [key, node] : map.entries()) specs_[key] = parse_gpu_spec(key, node);
  // A calibration key names a catalog GPU (this map's or an earlier one's) that prices by its own
  // measurements, with the same peaks and memory bandwidth.
  for (const auto& [key, node] : map.entries()) {
    const GpuSpec& g = specs_.at(key);
    if (g.calibration_key.empty()) continue;
    const ConfigNode at = node.required("calibration_key");
    const auto source = specs_.find(g.calibration_key);
    if (source == specs_.end())
      at.fail(fmt::format("unknown GPU \"{}\" (expected a catalog key: {})", g.calibration_key,
                          fmt::join(keys(), ", ")));
    if (!source->second.calibration_key.empty())
      at.fail(fmt::format("\"{}\" takes its measurements from \"{}\"; name that GPU instead",
                          g.calibration_key, source->second.calibration_key));
    if (const std::string why = calibration_mismatch(g, source->second); !why.empty())
      at.fail(fmt::format(
          "expected a GPU of the same peaks and memory bandwidth (measured kernel times carry "
          "over only between parts of the same silicon and clocks): {}",
          why));
  }
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
