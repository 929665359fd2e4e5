#pragma once
// Convolution on the CPU as im2col + Eigen GEMM, for the three training passes. Tensors are
// packed NCHW (filters K×(C/groups)×R×S) in fp32. Besides being timed by the CPU backend, these
// are real kernels: tests check them against a direct convolution and the adjoint identities.

#include <vector>

#include "kernels/kernel_request.hpp"

namespace scalecast::kernels {

class CpuConv {
 public:
  explicit CpuConv(const ConvParams& params);  // validates geometry, sizes scratch buffers

  std::size_t x_size() const { return x_size_; }
  std::size_t w_size() const { return w_size_; }
  std::size_t y_size() const { return y_size_; }
  // Floats of im2col scratch one image needs (C/groups·R·S × P·Q).
  std::size_t col_size() const { return static_cast<std::size_t>(crs_ * pq_); }
  // Use `workspace` (at least col_size() floats, owned by the caller) as the im2col scratch
  // instead of a buffer of this object's own, as a framework hands every convolution the same
  // workspace. Throws std::invalid_argument when it is too small.
  void use_workspace(float* workspace, std::size_t floats);

  // y = conv(x, w)
  void forward(const float* x, const float* w, float* y);
  // dx = conv^T(dy, w)
  void backward_data(const float* dy, const float* w, float* dx);
  // dw = sum over images of dy ⊗ im2col(x)
  void backward_filter(const float* x, const float* dy, float* dw);

 private:
  void im2col(const float* x_image, int group);
  void col2im(float* dx_image, int group) const;

  ConvParams p_;
  std::int64_t out_h_, out_w_, cg_, kg_, crs_, pq_;
  std::size_t x_size_, w_size_, y_size_;
  std::vector<float> col_;
  float* workspace_ = nullptr;  // the caller's scratch, when given
  float* cols() { return workspace_ != nullptr ? workspace_ : col_.data(); }
  const float* cols() const { return workspace_ != nullptr ? workspace_ : col_.data(); }
};

// Reference direct convolution (slow loops), for tests.
void direct_conv_forward(const ConvParams& p, const float* x, const float* w, float* y);

}  // namespace scalecast::kernels
