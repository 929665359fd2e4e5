#include "kernels/cpu_conv.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <stdexcept>
#include <string>

namespace scalecast::kernels {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapC = Eigen::Map<const RowMat>;
using Map = Eigen::Map<RowMat>;

}  // namespace

CpuConv::CpuConv(const ConvParams& params)
    : p_(params), out_h_(conv_output_h(params)), out_w_(conv_output_w(params)) {
  if (p_.groups < 1 || p_.c % p_.groups != 0 || p_.k % p_.groups != 0 || p_.n < 1)
    throw std::invalid_argument("cpu conv: groups must divide C and K, and N must be >= 1");
  cg_ = p_.c / p_.groups;
  kg_ = p_.k / p_.groups;
  crs_ = cg_ * p_.r * p_.s;
  pq_ = out_h_ * out_w_;
  x_size_ = static_cast<std::size_t>(p_.n * p_.c * p_.h * p_.w);
  w_size_ = static_cast<std::size_t>(p_.k * crs_);
  y_size_ = static_cast<std::size_t>(p_.n * p_.k * pq_);
  col_.assign(static_cast<std::size_t>(crs_ * pq_), 0.0f);
}

void CpuConv::use_workspace(float* workspace, std::size_t floats) {
  if (workspace == nullptr || floats < col_size())
    throw std::invalid_argument("cpu conv: workspace of " + std::to_string(floats) +
                                " floats, expected at least " + std::to_string(col_size()));
  workspace_ = workspace;
  col_.clear();
  col_.shrink_to_fit();
}

void CpuConv::im2col(const float* x_image, int group) {
  const float* xg = x_image + static_cast<std::ptrdiff_t>(group) * cg_ * p_.h * p_.w;
  float* out = cols();
  for (std::int64_t c = 0; c < cg_; ++c)
    for (std::int64_t r = 0; r < p_.r; ++r)
      for (std::int64_t s = 0; s < p_.s; ++s)
        for (std::int64_t oh = 0; oh < out_h_; ++oh) {
          const std::int64_t ih = oh * p_.stride_h - p_.pad_h + r * p_.dilation_h;
          for (std::int64_t ow = 0; ow < out_w_; ++ow) {
            const std::int64_t iw = ow * p_.stride_w - p_.pad_w + s * p_.dilation_w;
            *out++ = (ih >= 0 && ih < p_.h && iw >= 0 && iw < p_.w)
                         ? xg[(c * p_.h + ih) * p_.w + iw]
                         : 0.0f;
          }
        }
}

void CpuConv::col2im(float* dx_image, int group) const {
  float* xg = dx_image + static_cast<std::ptrdiff_t>(group) * cg_ * p_.h * p_.w;
  const float* in = cols();
  for (std::int64_t c = 0; c < cg_; ++c)
    for (std::int64_t r = 0; r < p_.r; ++r)
      for (std::int64_t s = 0; s < p_.s; ++s)
        for (std::int64_t oh = 0; oh < out_h_; ++oh) {
          const std::int64_t ih = oh * p_.stride_h - p_.pad_h + r * p_.dilation_h;
          for (std::int64_t ow = 0; ow < out_w_; ++ow, ++in) {
            const std::int64_t iw = ow * p_.stride_w - p_.pad_w + s * p_.dilation_w;
            if (ih >= 0 && ih < p_.h && iw >= 0 && iw < p_.w)
              xg[(c * p_.h + ih) * p_.w + iw] += *in;
          }
        }
}

void CpuConv::forward(const float* x, const float* w, float* y) {
  for (std::int64_t n = 0; n < p_.n; ++n)
    for (int g = 0; g < static_cast<int>(p_.groups); ++g) {
      im2col(x + n * p_.c * p_.h * p_.w, g);
      MapC wg(w + g * kg_ * crs_, kg_, crs_);
      MapC col(cols(), crs_, pq_);
      Map yg(y + (n * p_.k + g * kg_) * pq_, kg_, pq_);
      yg.noalias() = wg * col;
    }
}

void CpuConv::backward_data(const float* dy, const float* w, float* dx) {
  std::fill(dx, dx + x_size_, 0.0f);
  for (std::int64_t n = 0; n < p_.n; ++n)
    for (int g = 0; g < static_cast<int>(p_.groups); ++g) {
      MapC wg(w + g * kg_ * crs_, kg_, crs_);
      MapC dyg(dy + (n * p_.k + g * kg_) * pq_, kg_, pq_);
      Map col(cols(), crs_, pq_);
      col.noalias() = wg.transpose() * dyg;
      col2im(dx + n * p_.c * p_.h * p_.w, g);
    }
}

void CpuConv::backward_filter(const float* x, const float* dy, float* dw) {
  std::fill(dw, dw + w_size_, 0.0f);
  for (std::int64_t n = 0; n < p_.n; ++n)
    for (int g = 0; g < static_cast<int>(p_.groups); ++g) {
      im2col(x + n * p_.c * p_.h * p_.w, g);
      MapC col(cols(), crs_, pq_);
      MapC dyg(dy + (n * p_.k + g * kg_) * pq_, kg_, pq_);
      Map dwg(dw + g * kg_ * crs_, kg_, crs_);
      dwg.noalias() += dyg * col.transpose();
    }
}

void direct_conv_forward(const ConvParams& p, const float* x, const float* w, float* y) {
  const std::int64_t oh_n = conv_output_h(p), ow_n = conv_output_w(p);
  const std::int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t k = 0; k < p.k; ++k) {
      const std::int64_t g = k / kg;
      for (std::int64_t oh = 0; oh < oh_n; ++oh)
        for (std::int64_t ow = 0; ow < ow_n; ++ow) {
          double acc = 0.0;
          for (std::int64_t c = 0; c < cg; ++c)
            for (std::int64_t r = 0; r < p.r; ++r)
              for (std::int64_t s = 0; s < p.s; ++s) {
                const std::int64_t ih = oh * p.stride_h - p.pad_h + r * p.dilation_h;
                const std::int64_t iw = ow * p.stride_w - p.pad_w + s * p.dilation_w;
                if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
                acc += static_cast<double>(x[((n * p.c + g * cg + c) * p.h + ih) * p.w + iw]) *
                       w[((k * cg + c) * p.r + r) * p.s + s];
              }
          y[((n * p.k + k) * oh_n + oh) * ow_n + ow] = static_cast<float>(acc);
        }
    }
}

}  // namespace scalecast::kernels
