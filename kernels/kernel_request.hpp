#pragma once
// What one kernel measurement asks for and what it returns. kernels/ sits below models/ in the
// layering, so requests are plain shapes (convolution geometry, GEMM dimensions, element counts,
// copy direction and size, collective kind and size) rather than model ops; calibration/ maps
// each distinct model op onto one request and stores the result with its key.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/precision.hpp"

namespace scalecast::kernels {

enum class KernelKind {
  kConv,           // convolution, one pass
  kGemm,           // (batched) matrix multiply
  kElementwise,    // y = relu(x) style, one read one write per element
  kNormalization,  // batch-norm forward/backward
  kPooling,        // max pooling
  kSoftmax,        // softmax over rows
  kMemcpy,         // host/device copies
  kCollective,     // NCCL collective over all visible GPUs
  kFileRead,       // sequential read of a file
};

enum class ConvPass { kForward, kBackwardData, kBackwardFilter };
enum class CopyDirection {
  kHostToDevice,
  kDeviceToHost,
  kDeviceToDevice,
  kPeerToPeer,
  kHostToHost
};
enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kBroadcast };

std::string_view to_string(KernelKind k);
std::string_view to_string(ConvPass p);
std::string_view to_string(CopyDirection d);
std::string_view to_string(CollectiveKind c);

// Convolution in cuDNN terms: input N×C×H×W, K filters C/groups×R×S (R rows, S columns).
struct ConvParams {
  std::int64_t n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1;
  std::int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  std::int64_t groups = 1;
};

// C[m×n] = op(A)[m×k]·op(B)[k×n], column-major as in cuBLAS, `batch` independent products.
struct GemmParams {
  std::int64_t m = 1, n = 1, k = 1;
  bool trans_a = false, trans_b = false;
  std::int64_t batch = 1;
};

struct KernelRequest {
  KernelKind kind = KernelKind::kGemm;
  common::DType dtype = common::DType::kFp32;
  bool tensor_core = false;  // allow tensor-core math (mixed precision)
  ConvPass pass = ConvPass::kForward;
  bool backward = false;      // elementwise/normalization/pooling/softmax: the backward kernel
  ConvParams conv;            // kConv; the window of kPooling (r, s, strides, pads)
  GemmParams gemm;            // kGemm
  std::int64_t elements = 0;  // elementwise/normalization/pooling (input)/softmax
  std::int64_t channels = 0;  // normalization: C of an N×C×(elements/(N·C)) tensor; softmax: row
  std::int64_t size_bytes = 0;  // memcpy, collective, file read
  CopyDirection direction = CopyDirection::kHostToDevice;
  CollectiveKind collective = CollectiveKind::kAllReduce;
  std::string file_path;  // kFileRead: the file to read (created by the caller)
};

// Statistics over repeated timed samples; each sample is the mean of `reps_per_sample`
// back-to-back calls.
struct TimingStats {
  double min_s = 0.0;
  double median_s = 0.0;
  double mean_s = 0.0;
  int samples = 0;
  int reps_per_sample = 0;
};

struct KernelResult {
  std::string selection = "fixed";  // "find" (exhaustive best), "heuristic" (_v7 top-1), "fixed"
  TimingStats timing;
  std::string algorithm;  // e.g. "im2col+eigen-gemm", "IMPLICIT_PRECOMP_GEMM", "cublasGemmEx"
  std::string math;       // "fma", "tensor_op", ...
  std::int64_t workspace_bytes = 0;
  std::int64_t workspace_cap_bytes = 0;
  int ranks = 1;           // collectives: participating GPUs
  double algbw_Bps = 0.0;  // collectives: nccl-tests algbw (bytes/s)
  double busbw_Bps = 0.0;  // collectives: nccl-tests busbw (bytes/s)
};

// Output height/width of a convolution; throws std::invalid_argument for impossible geometry.
std::int64_t conv_output_h(const ConvParams& p);
std::int64_t conv_output_w(const ConvParams& p);

// Direct-convolution FLOPs (2·N·K·(C/groups)·R·S·P·Q), the DeepBench convention for every pass.
double conv_flops(const ConvParams& p);
double gemm_flops(const GemmParams& g);

// An elementwise kernel over more elements than one buffer set should hold (the whole optimizer
// shard of a large model: 8.8 G elements for Llama 3 70B at TP 8) is timed as consecutive calls
// over pieces of one reused set of buffers: `full` pieces of `piece` elements, then one of `tail`
// (0: none). Each piece is far larger than any cache at the caps the backends use, so the calls
// stream memory as the one large kernel would. elements <= max_piece: one piece, tail 0.
struct ElementPieces {
  std::int64_t piece = 0;
  std::int64_t full = 0;
  std::int64_t tail = 0;
  std::int64_t calls() const { return full + (tail > 0 ? 1 : 0); }
};
// Throws std::invalid_argument unless elements > 0 and max_piece > 0.
ElementPieces element_pieces(std::int64_t elements, std::int64_t max_piece);

// A short human signature, e.g. "conv fwd fp32 n8 c64 h56 w56 k64 r3 s3 pad1x1 str1x1".
std::string describe(const KernelRequest& r);

}  // namespace scalecast::kernels
