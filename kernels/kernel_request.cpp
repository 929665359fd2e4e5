#include "kernels/kernel_request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace scalecast::kernels {

std::string_view to_string(KernelKind k) {
  switch (k) {
    case KernelKind::kConv:
      return "conv";
    case KernelKind::kGemm:
      return "gemm";
    case KernelKind::kElementwise:
      return "elementwise";
    case KernelKind::kNormalization:
      return "normalization";
    case KernelKind::kPooling:
      return "pooling";
    case KernelKind::kSoftmax:
      return "softmax";
    case KernelKind::kMemcpy:
      return "memcpy";
    case KernelKind::kCollective:
      return "collective";
    case KernelKind::kFileRead:
      return "file_read";
  }
  return "?";
}

std::string_view to_string(ConvPass p) {
  switch (p) {
    case ConvPass::kForward:
      return "fwd";
    case ConvPass::kBackwardData:
      return "bwd_data";
    case ConvPass::kBackwardFilter:
      return "bwd_filter";
  }
  return "?";
}

std::string_view to_string(CopyDirection d) {
  switch (d) {
    case CopyDirection::kHostToDevice:
      return "h2d";
    case CopyDirection::kDeviceToHost:
      return "d2h";
    case CopyDirection::kDeviceToDevice:
      return "d2d";
    case CopyDirection::kPeerToPeer:
      return "p2p";
    case CopyDirection::kHostToHost:
      return "h2h";
  }
  return "?";
}

std::string_view to_string(CollectiveKind c) {
  switch (c) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kBroadcast:
      return "broadcast";
  }
  return "?";
}

namespace {

std::int64_t output_extent(std::int64_t in, std::int64_t pad, std::int64_t filter,
                           std::int64_t stride, std::int64_t dilation, const char* what) {
  if (in <= 0 || filter <= 0 || stride <= 0 || dilation <= 0 || pad < 0)
    throw std::invalid_argument(
        fmt::format("conv {}: sizes must be positive (input {}, filter {}, "
                    "stride {}, dilation {}, pad {})",
                    what, in, filter, stride, dilation, pad));
  const std::int64_t span = (filter - 1) * dilation + 1;
  if (in + 2 * pad < span)
    throw std::invalid_argument(
        fmt::format("conv {}: filter span {} exceeds padded input {}", what, span, in + 2 * pad));
  return (in + 2 * pad - span) / stride + 1;
}

}  // namespace

ElementPieces element_pieces(std::int64_t elements, std::int64_t max_piece) {
  if (elements <= 0 || max_piece <= 0)
    throw std::invalid_argument(fmt::format(
        "element_pieces: elements ({}) and max_piece ({}) must be > 0", elements, max_piece));
  ElementPieces p;
  p.piece = std::min(elements, max_piece);
  p.full = elements / p.piece;
  p.tail = elements % p.piece;
  return p;
}

std::int64_t conv_output_h(const ConvParams& p) {
  return output_extent(p.h, p.pad_h, p.r, p.stride_h, p.dilation_h, "height");
}

std::int64_t conv_output_w(const ConvParams& p) {
  return output_extent(p.w, p.pad_w, p.s, p.stride_w, p.dilation_w, "width");
}

double conv_flops(const ConvParams& p) {
  const double pq = static_cast<double>(conv_output_h(p)) * static_cast<double>(conv_output_w(p));
  return 2.0 * static_cast<double>(p.n) * static_cast<double>(p.k) *
         static_cast<double>(p.c / std::max<std::int64_t>(p.groups, 1)) *
         static_cast<double>(p.r * p.s) * pq;
}

double gemm_flops(const GemmParams& g) {
  return 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) *
         static_cast<double>(g.batch);
}

std::string describe(const KernelRequest& r) {
  std::string s = fmt::format("{} {}{}", to_string(r.kind), common::to_string(r.dtype),
                              r.tensor_core ? "+tc" : "");
  const auto& c = r.conv;
  switch (r.kind) {
    case KernelKind::kConv:
      return fmt::format("{} {} n{} c{} h{} w{} k{} r{} s{} pad{}x{} str{}x{}", s,
                         to_string(r.pass), c.n, c.c, c.h, c.w, c.k, c.r, c.s, c.pad_h, c.pad_w,
                         c.stride_h, c.stride_w);
    case KernelKind::kGemm:
      return fmt::format("{} m{} n{} k{} {}{} b{}", s, r.gemm.m, r.gemm.n, r.gemm.k,
                         r.gemm.trans_a ? 'T' : 'N', r.gemm.trans_b ? 'T' : 'N', r.gemm.batch);
    case KernelKind::kMemcpy:
      return fmt::format("{} {} {}B", s, to_string(r.direction), r.size_bytes);
    case KernelKind::kCollective:
      return fmt::format("{} {} {}B", s, to_string(r.collective), r.size_bytes);
    case KernelKind::kFileRead:
      return fmt::format("{} {}B", s, r.size_bytes);
    default:
      return fmt::format("{}{} e{}", s, r.backward ? " bwd" : " fwd", r.elements);
  }
}

}  // namespace scalecast::kernels
