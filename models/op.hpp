#pragma once
// One operation of a training step: what it computes (class and full shape), how much work it is
// (FLOPs, bytes moved) and in which precision. The cost model keys on op class + shape + dtype +
// pass; the replay engine only needs the op's id, stream and dependencies. This header is the
// contract between models/ (which produces ops), calibration/ (which prices them) and sim/
// (which replays them).

#include <cstdint>
#include <string>
#include <string_view>

#include "common/precision.hpp"

namespace scalecast::models {

enum class OpClass {
  kConv,           // 2-D convolution; shape in Op::conv
  kGemm,           // matrix multiply (linear layers, batched attention products); Op::gemm
  kElementwise,    // activation, residual add, dropout, scale; Op::elements
  kReduction,      // sums over a dimension (bias gradient, loss); Op::elements
  kNormalization,  // batch-norm, layer-norm; Op::elements
  kPooling,        // max/avg pooling; Op::elements (output elements) and Op::conv for window
  kSoftmax,        // softmax / cross-entropy; Op::elements
  kEmbedding,      // table lookup / gradient scatter; Op::elements
  kAttention,      // fused attention kernel (when not expressed as GEMMs); Op::gemm per head
  kOptimizer,      // weight update (SGD momentum, Adam, LAMB); Op::elements = parameters
  kMemcpy,         // host-device or device-device copy; Op::bytes_read
};

enum class Pass { kForward, kBackwardData, kBackwardWeight, kLoss, kOptimizer };

std::string_view to_string(OpClass c);
std::string_view to_string(Pass p);

// Convolution geometry in cuDNN terms: input N×C×H×W, K filters of C/groups×R×S, output N×K×P×Q.
struct ConvShape {
  std::int64_t n = 0, c = 0, h = 0, w = 0;  // input
  std::int64_t k = 0, r = 0, s = 0;         // filters
  std::int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  std::int64_t groups = 1;
  std::int64_t p = 0, q = 0;  // output height and width
};

// C[M×N] = op(A)[M×K] · op(B)[K×N], `batch` independent products (BLAS column-major convention
// as cuBLAS and DeepBench use it).
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  std::int64_t batch = 1;
};

struct Op {
  std::string name;  // unique in the step, e.g. "layer1.0.conv2.wgrad"
  OpClass op_class = OpClass::kElementwise;
  Pass pass = Pass::kForward;
  int layer = -1;                              // index of the model layer this op belongs to
  common::DType dtype = common::DType::kFp32;  // what it computes in
  bool tensor_core = false;   // matrix op eligible for tensor cores (fp16/bf16/tf32)
  ConvShape conv;             // valid for kConv (and the window of kPooling)
  GemmShape gemm;             // valid for kGemm and kAttention
  std::int64_t elements = 0;  // valid for memory-bound classes
  double flops = 0.0;         // floating-point operations (1 MAC = 2 FLOP)
  double bytes_read = 0.0;    // device-memory bytes read (activations + weights)
  double bytes_written = 0.0;
  std::int64_t params = 0;  // trainable parameters owned (forward op of a layer only)
};

}  // namespace scalecast::models
