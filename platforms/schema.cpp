#include "platforms/schema.hpp"

#include <fmt/format.h>
#include <algorithm>

namespace scalecast::platforms {

const std::vector<SchemaField>& platform_schema() {
  static const std::vector<SchemaField> fields = {
      {"name", "text", "required", "machine name"},
      {"description", "text", "\"\"", "one line shown by describe"},
      {"gpu_catalog", "path", "gpus.yaml",
       "GPU catalog file, relative to the platform file, else platforms/ in the data dirs"},
      {"gpus.KEY", "map", "none",
       "extra GPU catalog entries for this machine (same keys as the catalog)"},
      {"node_types.NAME", "map", "required", "a reusable node type"},
      {"node_types.NAME.description", "text", "\"\"", "free text"},
      {"node_types.NAME.cpu.model", "text", "\"\"", "CPU model name"},
      {"node_types.NAME.cpu.sockets", "count >= 1", "required",
       "CPU sockets; each is a SimGrid host named cpu0, cpu1..."},
      {"node_types.NAME.cpu.cores_per_socket", "count >= 1", "required",
       "usable cores per socket (host core count)"},
      {"node_types.NAME.cpu.core_speed", "FLOP rate", "10GFLOPS",
       "speed of one core (host speed; CPU op costs come from calibration)"},
      {"node_types.NAME.cpu.memory_bandwidth", "bandwidth", "0 (unknown)",
       "DRAM bandwidth per socket"},
      {"node_types.NAME.cpu.memory", "size", "0 (unknown)", "DRAM per node"},
      {"node_types.NAME.gpus.type", "catalog key", "required",
       "GPU model, a key of the GPU catalog"},
      {"node_types.NAME.gpus.count", "count >= 1", "required",
       "GPUs per node, named gpu0, gpu1..."},
      {"node_types.NAME.gpus.socket_of_gpu", "list of socket indices", "nearest CPU by hops",
       "socket each GPU belongs to"},
      {"node_types.NAME.gpus.nic_of_gpu", "list of NIC indices",
       "nearest NIC by hops, ties round-robin",
       "NIC rail each GPU sends inter-node traffic through"},
      {"node_types.NAME.pcie_switches", "count", "0",
       "PCIe switches inside the node, named pcie0, pcie1..."},
      {"node_types.NAME.nvswitches", "count", "0",
       "NVSwitch crossbars (or switch planes), named nvs0, nvs1..."},
      {"node_types.NAME.nics.count", "count", "0", "NIC rails per node, named nic0, nic1..."},
      {"node_types.NAME.nics.technology", "text", "\"\"",
       "edr, hdr200, ndr400, slingshot11, 25gbe..."},
      {"node_types.NAME.nics.bandwidth", "bandwidth", "required if count > 0",
       "line rate per rail per direction (NIC-to-leaf link)"},
      {"node_types.NAME.nics.latency", "time", "0s", "latency of the NIC-to-leaf link"},
      {"node_types.NAME.nics.rdma", "bool", "true (required for Ethernet)",
       "the NICs carry RDMA (IB verbs, RoCE); false: TCP/IP only, NCCL over sockets"},
      {"node_types.NAME.links[]", "list", "[]", "groups of full-duplex intra-node links"},
      {"node_types.NAME.links[].class", "text", "required",
       "technology and link-name prefix: nvlink, xbus, upi, pcie, nvswitch..."},
      {"node_types.NAME.links[].bandwidth", "bandwidth", "required",
       "per direction, per unit of count"},
      {"node_types.NAME.links[].count", "count >= 1", "1",
       "bricks/lanes aggregated in each link (bandwidth x count)"},
      {"node_types.NAME.links[].latency", "time", "0s", "one-way latency"},
      {"node_types.NAME.links[].between", "list of [a, b]", "required",
       "endpoint pairs: cpuN, gpuN, pcieN, nvsN, nicN"},
      {"node_types.NAME.nvlink_matrix.class", "text", "nvlink", "link class of the matrix links"},
      {"node_types.NAME.nvlink_matrix.link_bandwidth", "bandwidth", "required",
       "one link, one direction"},
      {"node_types.NAME.nvlink_matrix.latency", "time", "0s", "one-way latency"},
      {"node_types.NAME.nvlink_matrix.counts", "GPUxGPU counts", "required",
       "symmetric link-count matrix (0 = no direct link)"},
      {"node_types.NAME.nvme.read_bandwidth", "bandwidth", "required",
       "node-local NVMe read rate (a SimGrid disk on cpu0)"},
      {"node_types.NAME.nvme.write_bandwidth", "bandwidth", "required",
       "node-local NVMe write rate"},
      {"node_types.NAME.nvme.capacity", "size", "0 (unknown)", "usable capacity"},
      {"partitions[].name", "text", "required", "partition name (unique)"},
      {"partitions[].node_type", "node type name", "required", "type of this partition's nodes"},
      {"partitions[].nodes", "count >= 1", "required",
       "node count; nodes are numbered partition after partition"},
      {"partitions[].description", "text", "\"\"", "free text"},
      {"network.topology", "name", "required",
       "fat_tree, rail_optimized, dragonfly or dragonfly_plus"},
      {"network.port_bandwidth", "bandwidth", "required",
       "switch port rate per direction; basis of uplink capacities"},
      {"network.description", "text", "\"\"", "free text"},
      {"network.sharp", "true/false", "false",
       "switches reduce in the network (SHARP); NCCL's CollNet all-reduce where a scenario "
       "enables it (allreduce.collnet)"},
      {"network.levels[].radix", "count >= 1", "required (fat_tree)",
       "children per switch at this level (NIC ports at level 1)"},
      {"network.levels[].oversubscription", "ratio >= 1", "1",
       "down:up ratio: uplink = radix x child bandwidth / ratio"},
      {"network.levels[].latency", "time", "0s", "latency of this level's uplink"},
      {"network.su_nodes", "count >= 1", "required (rail_optimized)",
       "nodes per scalable unit; rail r of an SU's nodes shares leaf (SU, r)"},
      {"network.leaf_oversubscription", "ratio >= 1", "1",
       "rail_optimized / dragonfly_plus: leaf down:up ratio"},
      {"network.leaf_uplink_latency", "time", "0s",
       "rail_optimized / dragonfly_plus: leaf-to-spine latency"},
      {"network.routers_per_group", "count >= 1", "required (dragonfly)",
       "routers per group, all-to-all connected"},
      {"network.ports_per_router", "count >= 1", "required (dragonfly)", "NIC ports per router"},
      {"network.local_link.bandwidth", "bandwidth", "required (dragonfly)",
       "router-to-router link in a group"},
      {"network.local_link.latency", "time", "0s", "router-to-router latency"},
      {"network.leaves_per_group", "count >= 1", "required (dragonfly_plus)",
       "leaf switches per group (group = leaf/spine fat tree)"},
      {"network.ports_per_leaf", "count >= 1", "required (dragonfly_plus)", "NIC ports per leaf"},
      {"network.global_link.bandwidth", "bandwidth", "required (dragonfly*)",
       "one global link between two groups"},
      {"network.global_link.latency", "time", "0s", "global link latency"},
      {"network.global_link.links_per_group_pair", "count >= 1", "1",
       "parallel global links between every pair of groups"},
      {"network_model.description", "text", "\"\"", "where the factors come from"},
      {"network_model.factors[].class", "link class or *", "*",
       "applies when the route's bottleneck link has this class (one some link has)"},
      {"network_model.factors[].min_size", "size", "0B",
       "smallest message size the rule applies to"},
      {"network_model.factors[].max_size", "size", "infinite",
       "messages of at least this size do not match"},
      {"network_model.factors[].latency_factor", "number 1-1000", "1",
       "multiplies the route latency (calibrated mode only)"},
      {"network_model.factors[].bandwidth_factor", "number in (0, 1]", "1",
       "efficiency: fraction of the bottleneck bandwidth a flow gets (calibrated mode only)"},
      {"network_model.factors[].source", "text", "\"\"", "where the factor comes from"},
      {"storage.pfs.name", "text", "pfs", "file system name"},
      {"storage.pfs.servers", "count >= 1", "required", "real server count"},
      {"storage.pfs.simulated_servers", "count >= 1", "min(servers, 8)",
       "storage-server hosts built; the aggregate is split over them"},
      {"storage.pfs.read_bandwidth", "bandwidth", "required",
       "aggregate read bandwidth of the whole file system"},
      {"storage.pfs.write_bandwidth", "bandwidth", "read_bandwidth", "aggregate write bandwidth"},
      {"storage.pfs.per_server_bandwidth", "bandwidth", "max(read, write) / simulated_servers",
       "NIC of one simulated server"},
      {"storage.pfs.per_client_bandwidth", "bandwidth", "0 (node NICs only)",
       "cap per client node"},
      {"storage.pfs.metadata_rate", "ops/s", "0 (unknown)", "metadata operations per second"},
      {"storage.pfs.latency", "time", "0s", "server link latency"},
      {"storage.pfs.capacity", "size", "0 (unknown)", "capacity"},
  };
  return fields;
}

const std::vector<SchemaField>& gpu_catalog_schema() {
  static const std::vector<SchemaField> fields = {
      {"gpus.KEY.fp64", "FLOP rate", "required", "dense FP64 peak"},
      {"gpus.KEY.fp32", "FLOP rate", "required", "dense FP32 peak"},
      {"gpus.KEY.fp16", "FLOP rate", "0", "non-tensor FP16 peak"},
      {"gpus.KEY.tensor_fp16", "FLOP rate", "0", "tensor-core FP16 peak (dense)"},
      {"gpus.KEY.tensor_bf16", "FLOP rate", "0", "tensor-core BF16 peak (dense)"},
      {"gpus.KEY.tensor_tf32", "FLOP rate", "0", "tensor-core TF32 peak (dense)"},
      {"gpus.KEY.tensor_fp8", "FLOP rate", "0", "tensor-core FP8 peak (dense)"},
      {"gpus.KEY.memory", "size", "required", "device memory"},
      {"gpus.KEY.memory_bandwidth", "bandwidth", "required", "device memory bandwidth"},
      {"gpus.KEY.nvlink.generation", "text", "none", "nvlink1..nvlink4"},
      {"gpus.KEY.nvlink.links", "count", "0", "NVLink links per GPU"},
      {"gpus.KEY.nvlink.link_bandwidth", "bandwidth", "0", "one link, one direction"},
      {"gpus.KEY.host_link", "text", "required", "host interface, e.g. pcie3x16, nvlink2"},
      {"gpus.KEY.calibration_key", "text", "the entry's own key",
       "catalog GPU of the same peaks and memory bandwidth whose kernel measurements price it"},
  };
  return fields;
}

std::string format_schema() {
  auto table = [](const std::vector<SchemaField>& fields) {
    std::size_t wk = 3, wu = 4, wd = 7;
    for (const auto& f : fields) {
      wk = std::max(wk, f.key.size());
      wu = std::max(wu, f.unit.size());
      wd = std::max(wd, f.fallback.size());
    }
    std::string out = fmt::format("  {:<{}}  {:<{}}  {:<{}}  {}\n", "key", wk, "unit", wu,
                                  "default", wd, "meaning");
    for (const auto& f : fields) {
      out += fmt::format("  {:<{}}  {:<{}}  {:<{}}  {}\n", f.key, wk, f.unit, wu, f.fallback, wd,
                         f.meaning);
    }
    return out;
  };
  return "Platform file schema (platforms/NAME.yaml):\n" + table(platform_schema()) +
         "\nGPU catalog schema (platforms/gpus.yaml):\n" + table(gpu_catalog_schema());
}

}  // namespace scalecast::platforms
