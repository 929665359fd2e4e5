#pragma once
// ResNet-50 v1.5's convolution and classifier shapes as model ops (He et al. 2016, torchvision
// layout: stride in the 3×3 of each stage's first block), for calibration tests written before
// the models layer's zoo is available. Forward, backward-data (except the stem, whose input
// needs no gradient) and backward-filter for every conv; the fc layer as three GEMMs.

#include <array>
#include <string>
#include <vector>

#include "models/op.hpp"

namespace scalecast::calibration::testing {

inline std::vector<models::Op> resnet50_conv_gemm_ops(std::int64_t batch) {
  using models::Op;
  using models::OpClass;
  using models::Pass;
  std::vector<Op> ops;
  const auto conv = [&](const std::string& name, std::int64_t c, std::int64_t hw, std::int64_t k,
                        std::int64_t rs, std::int64_t stride, bool stem = false) {
    for (Pass pass : {Pass::kForward, Pass::kBackwardData, Pass::kBackwardWeight}) {
      if (stem && pass == Pass::kBackwardData) continue;
      Op op;
      op.name = name;
      op.op_class = OpClass::kConv;
      op.pass = pass;
      op.conv.n = batch, op.conv.c = c, op.conv.h = hw, op.conv.w = hw, op.conv.k = k;
      op.conv.r = rs, op.conv.s = rs, op.conv.pad_h = rs / 2, op.conv.pad_w = rs / 2;
      op.conv.stride_h = stride, op.conv.stride_w = stride;
      ops.push_back(op);
    }
  };
  conv("conv1", 3, 224, 64, 7, 2, true);
  // (blocks, width, input channels, input size, stride of the first block)
  const std::array<std::array<std::int64_t, 5>, 4> stages{
      {{3, 64, 64, 56, 1}, {4, 128, 256, 56, 2}, {6, 256, 512, 28, 2}, {3, 512, 1024, 14, 2}}};
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const auto [blocks, width, in_c, in_hw, stride] = stages[s];
    const std::int64_t out_c = width * 4, out_hw = in_hw / stride;
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::string p = "layer" + std::to_string(s + 1) + "." + std::to_string(b);
      const std::int64_t c = b == 0 ? in_c : out_c, hw = b == 0 ? in_hw : out_hw;
      conv(p + ".conv1", c, hw, width, 1, 1);
      conv(p + ".conv2", width, hw, width, 3, b == 0 ? stride : 1);
      conv(p + ".conv3", width, out_hw, out_c, 1, 1);
      if (b == 0) conv(p + ".downsample", in_c, in_hw, out_c, 1, stride);
    }
  }
  // fc 2048 → 1000: forward Y = W·X, dX = Wᵀ·dY, dW = dY·Xᵀ (column-major, cuBLAS convention).
  const auto gemm = [&](const std::string& name, Pass pass, std::int64_t m, std::int64_t n,
                        std::int64_t k, bool ta, bool tb) {
    Op op;
    op.name = name;
    op.op_class = OpClass::kGemm;
    op.pass = pass;
    op.gemm = {m, n, k, ta, tb, 1};
    ops.push_back(op);
  };
  gemm("fc", Pass::kForward, 1000, batch, 2048, false, false);
  gemm("fc.dgrad", Pass::kBackwardData, 2048, batch, 1000, true, false);
  gemm("fc.wgrad", Pass::kBackwardWeight, 1000, 2048, batch, false, true);
  return ops;
}

}  // namespace scalecast::calibration::testing
