#include "calibration/measurement_key.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace scalecast::calibration {

std::string MeasurementKey::signature() const {
  std::string s = fmt::format("{} {} {} {}{}", device, op, pass, common::to_string(dtype),
                              tensor_core ? "+tc" : "");
  if (!selection.empty()) s += " " + selection;
  for (const auto& [name, v] : dims) s += fmt::format(" {}={}", name, v);
  return s;
}

std::int64_t MeasurementKey::dim(std::string_view name) const {
  const auto it = dims.find(std::string(name));
  return it == dims.end() ? 0 : it->second;
}

const std::vector<std::string>& op_names() {
  static const std::vector<std::string> names{
      "conv",      "gemm",      "elementwise", "reduction", "normalization", "pooling",  "softmax",
      "embedding", "attention", "optimizer",   "memcpy",    "collective",    "file_read"};
  return names;
}

const std::vector<std::string>& required_dims(std::string_view op) {
  static const std::vector<std::string> conv{"n", "c",     "h",     "w",        "k",       "r",
                                             "s", "pad_h", "pad_w", "stride_h", "stride_w"};
  static const std::vector<std::string> gemm{"m", "n", "k", "trans_a", "trans_b"};
  static const std::vector<std::string> elements{"elements"};
  static const std::vector<std::string> bytes{"bytes"};
  static const std::vector<std::string> collective{"bytes", "ranks"};
  if (op == "conv") return conv;
  if (op == "gemm" || op == "attention") return gemm;
  if (op == "memcpy" || op == "file_read") return bytes;
  if (op == "collective") return collective;
  return elements;
}

const std::vector<std::string>& known_dims(std::string_view op) {
  static const std::vector<std::string> conv{
      "n",     "c",     "h",        "w",        "k",          "r",          "s",
      "pad_h", "pad_w", "stride_h", "stride_w", "dilation_h", "dilation_w", "groups"};
  static const std::vector<std::string> gemm{"m", "n", "k", "trans_a", "trans_b", "batch"};
  static const std::vector<std::string> pooling{"elements", "r", "s", "stride_h"};
  static const std::vector<std::string> collective{"bytes", "ranks", "nodes"};
  if (op == "conv") return conv;
  if (op == "gemm" || op == "attention") return gemm;
  if (op == "pooling") return pooling;
  if (op == "collective") return collective;
  return required_dims(op);  // elements, or bytes for memcpy and file_read
}

const std::vector<std::string>& known_passes(std::string_view op) {
  // key_for() names model ops by pass_name(); GEMMs (and attention, priced as GEMMs) by "any";
  // the calibration runner measures copies per direction and collectives per kind.
  static const std::vector<std::string> model{"fwd", "bwd_data", "bwd_filter", "loss", "optimizer"};
  static const std::vector<std::string> any{"any"};
  static const std::vector<std::string> memcpy{"h2d", "d2h", "d2d", "p2p", "h2h"};
  static const std::vector<std::string> collective{"all_reduce", "all_gather", "reduce_scatter",
                                                   "broadcast"};
  if (op == "gemm" || op == "attention" || op == "file_read") return any;
  if (op == "memcpy") return memcpy;
  if (op == "collective") return collective;
  return model;
}

const std::vector<std::string>& free_dims(std::string_view op) {
  static const std::vector<std::string> conv{"n"};
  static const std::vector<std::string> gemm{"m", "n", "k"};
  static const std::vector<std::string> elements{"elements"};
  static const std::vector<std::string> bytes{"bytes"};
  if (op == "conv") return conv;
  if (op == "gemm" || op == "attention") return gemm;
  if (op == "memcpy" || op == "file_read" || op == "collective") return bytes;
  return elements;
}

bool is_compute_op(std::string_view op) {
  return op == "conv" || op == "gemm" || op == "attention";
}

// Database keys use the models layer's op-class names, so both spell a class the same way.
std::string_view op_name(models::OpClass c) { return models::to_string(c); }

std::string_view pass_name(models::Pass p) {
  using models::Pass;
  switch (p) {
    case Pass::kForward:
      return "fwd";
    case Pass::kBackwardData:
      return "bwd_data";
    case Pass::kBackwardWeight:
      return "bwd_filter";
    case Pass::kLoss:
      return "loss";
    case Pass::kOptimizer:
      return "optimizer";
  }
  return "?";
}

MeasurementKey key_for(const models::Op& op, const std::string& device) {
  MeasurementKey k;
  k.device = device;
  k.op = std::string(op_name(op.op_class));
  k.pass = std::string(pass_name(op.pass));
  k.dtype = op.dtype;
  k.tensor_core = op.tensor_core;
  const auto& c = op.conv;
  switch (op.op_class) {
    case models::OpClass::kConv:
      if (c.n <= 0 || c.c <= 0 || c.h <= 0 || c.w <= 0 || c.k <= 0 || c.r <= 0 || c.s <= 0)
        throw std::invalid_argument(
            fmt::format("op '{}': a conv needs positive n, c, h, w, k, r, s", op.name));
      k.dims = {{"n", c.n},
                {"c", c.c},
                {"h", c.h},
                {"w", c.w},
                {"k", c.k},
                {"r", c.r},
                {"s", c.s},
                {"pad_h", c.pad_h},
                {"pad_w", c.pad_w},
                {"stride_h", c.stride_h},
                {"stride_w", c.stride_w}};
      // Defaults stay out of the key so DeepBench rows (which have neither) match.
      if (c.dilation_h != 1) k.dims["dilation_h"] = c.dilation_h;
      if (c.dilation_w != 1) k.dims["dilation_w"] = c.dilation_w;
      if (c.groups != 1) k.dims["groups"] = c.groups;
      break;
    case models::OpClass::kGemm:
    case models::OpClass::kAttention:
      if (op.gemm.m <= 0 || op.gemm.n <= 0 || op.gemm.k <= 0)
        throw std::invalid_argument(fmt::format("op '{}': a gemm needs positive m, n, k", op.name));
      k.pass = "any";  // the same GEMM kernel serves every pass
      k.dims = {{"m", op.gemm.m},
                {"n", op.gemm.n},
                {"k", op.gemm.k},
                {"trans_a", op.gemm.trans_a ? 1 : 0},
                {"trans_b", op.gemm.trans_b ? 1 : 0}};
      if (op.gemm.batch != 1) k.dims["batch"] = op.gemm.batch;
      break;
    case models::OpClass::kMemcpy:
      k.pass = "h2d";  // training steps copy the input batch host to device
      k.dims = {{"bytes", static_cast<std::int64_t>(op.bytes_read)}};
      break;
    case models::OpClass::kPooling:
      k.dims = {{"elements", op.elements}};
      if (c.r > 0) k.dims["r"] = c.r, k.dims["s"] = c.s, k.dims["stride_h"] = c.stride_h;
      break;
    default:
      k.dims = {{"elements", op.elements}};
      break;
  }
  return k;
}

double key_flops(const MeasurementKey& k) {
  const auto d = [&](const char* n) { return static_cast<double>(k.dim(n)); };
  if (k.op == "conv") {
    const auto out = [](double in, double pad, double f, double stride, double dil) {
      return std::floor((in + 2 * pad - ((f - 1) * std::max(dil, 1.0) + 1)) / stride) + 1;
    };
    const double p = out(d("h"), d("pad_h"), d("r"), std::max(d("stride_h"), 1.0), d("dilation_h"));
    const double q = out(d("w"), d("pad_w"), d("s"), std::max(d("stride_w"), 1.0), d("dilation_w"));
    const double groups = std::max(d("groups"), 1.0);
    return 2.0 * d("n") * d("k") * (d("c") / groups) * d("r") * d("s") * std::max(p, 0.0) *
           std::max(q, 0.0);
  }
  if (k.op == "gemm" || k.op == "attention")
    return 2.0 * d("m") * d("n") * d("k") * std::max(d("batch"), 1.0);
  return 0.0;
}

double key_min_bytes(const MeasurementKey& k) {
  const double eb = common::dtype_bytes(k.dtype);
  const auto d = [&](const char* n) { return static_cast<double>(k.dim(n)); };
  if (k.op == "conv") {
    const double flops = key_flops(k);
    const double pq =
        flops / (2.0 * d("n") * d("k") * (d("c") / std::max(d("groups"), 1.0)) * d("r") * d("s"));
    const double x = d("n") * d("c") * d("h") * d("w");
    const double w = d("k") * (d("c") / std::max(d("groups"), 1.0)) * d("r") * d("s");
    const double y = d("n") * d("k") * pq;
    return eb * (x + w + y);
  }
  if (k.op == "gemm" || k.op == "attention")
    return eb * std::max(d("batch"), 1.0) * (d("m") * d("k") + d("k") * d("n") + d("m") * d("n"));
  if (k.dims.count("bytes")) return d("bytes");
  // Memory-bound classes: one read and one write per element.
  return 2.0 * eb * d("elements");
}

}  // namespace scalecast::calibration
