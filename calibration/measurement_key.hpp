#pragma once
// The key of one measured kernel: device (catalog key), op class, pass, dtype, tensor-core
// math, algorithm-selection mode and the integer dimensions of the shape (conv geometry, GEMM
// M/N/K and transposes, element counts, copy or collective size and ranks). Keys compare by
// value, so the same kernel measured twice is recognised; a "shape family" is the set of keys
// that agree on everything but one free dimension (batch N for convs, M/N/K for GEMMs).

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/precision.hpp"
#include "models/op.hpp"

namespace scalecast::calibration {

struct MeasurementKey {
  std::string device;  // catalog key, e.g. "v100-sxm2"
  std::string op;      // op_names(): "conv", "gemm", ..., "memcpy", "collective", "file_read"
  std::string pass;    // conv/elementwise: fwd|bwd_data|bwd_filter|loss|optimizer; gemm: any;
                       // memcpy: h2d|d2h|d2d|p2p|h2h; collective: all_reduce|...; file_read: any
  common::DType dtype = common::DType::kFp32;
  bool tensor_core = false;
  std::string selection = "find";  // find | heuristic | fixed
  std::map<std::string, std::int64_t> dims;

  auto operator<=>(const MeasurementKey&) const = default;
  bool operator==(const MeasurementKey&) const = default;

  // "v100-sxm2 conv fwd fp32 find c=64 h=56 k=64 n=8 ..." (dims in key order).
  std::string signature() const;
  std::int64_t dim(std::string_view name) const;  // 0 when absent
};

// Known op names, in a stable order (also the accepted values of `op:` in a database file).
const std::vector<std::string>& op_names();
// Dimension names an op of this class must carry in a database entry.
const std::vector<std::string>& required_dims(std::string_view op);
// Every dimension name a database entry of this class may carry: the required ones plus the
// optional ones (conv dilation_h/w and groups, gemm/attention batch, pooling r s stride_h,
// collective nodes).
const std::vector<std::string>& known_dims(std::string_view op);
// The passes a database entry of this class may name: conv and the memory-bound classes the
// model passes (fwd, bwd_data, bwd_filter, loss, optimizer), gemm/attention/file_read "any",
// memcpy a copy direction, collective a collective kind.
const std::vector<std::string>& known_passes(std::string_view op);
// The dimensions interpolation may vary for this op (docs/architecture.md, "Compute costs"): n for
// conv, m/n/k for gemm, elements for memory-bound classes, bytes for memcpy and collectives.
const std::vector<std::string>& free_dims(std::string_view op);
bool is_compute_op(std::string_view op);  // conv, gemm, attention: priced by FLOPs

std::string_view op_name(models::OpClass c);
std::string_view pass_name(models::Pass p);

// The key a model op is priced under on `device` (selection left at "find"). Throws
// std::invalid_argument for an op without the shape its class needs (e.g. a conv with n = 0).
MeasurementKey key_for(const models::Op& op, const std::string& device);

// Work of a keyed kernel from its dimensions: direct-conv or GEMM FLOPs, and the minimum bytes
// moved (inputs, weights, outputs once each). bytes is 0 for classes without a byte count in
// their dims.
double key_flops(const MeasurementKey& key);
double key_min_bytes(const MeasurementKey& key);

}  // namespace scalecast::calibration
