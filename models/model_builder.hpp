#pragma once
// ModelBuilder: the zoo's (and a program's) way to write a network as code, one call per layer,
// the way torchvision's forward() reads. Each call appends a layer that reads `from` (default:
// the layer added last) and returns its index, so branches and residual adds are explicit.

#include <cstdint>
#include <string>
#include <vector>

#include "models/model.hpp"

namespace scalecast::models {

class ModelBuilder {
 public:
  ModelBuilder(std::string name, ModelInput input, OptimizerKind optimizer);

  int last() const { return static_cast<int>(model_.layers.size()) - 1; }
  static constexpr int kInput = 0;  // index of the model input

  int conv(std::string name, std::int64_t out, std::int64_t kernel, std::int64_t stride,
           std::int64_t pad, bool bias = false, int from = -1);
  int conv(std::string name, std::int64_t out, std::int64_t kernel_h, std::int64_t kernel_w,
           std::int64_t stride_h, std::int64_t stride_w, std::int64_t pad_h, std::int64_t pad_w,
           bool bias = false, int from = -1);
  int linear(std::string name, std::int64_t out, bool bias = true, int from = -1);
  // A linear whose weight is embedding layer `embedding`'s table (GPT-2 / BERT output layers).
  int tied_linear(std::string name, int embedding, bool bias, int from = -1);
  int batch_norm(std::string name, int from = -1);
  int layer_norm(std::string name, int from = -1);
  int relu(std::string name, int from = -1);
  int gelu(std::string name, int from = -1);
  int tanh(std::string name, int from = -1);
  int dropout(std::string name, double p, int from = -1);
  int max_pool(std::string name, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
               bool ceil_mode = false, int from = -1);
  int avg_pool(std::string name, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
               int from = -1);
  int adaptive_avg_pool(std::string name, std::int64_t out_h, std::int64_t out_w, int from = -1);
  int global_avg_pool(std::string name, int from = -1);
  int flatten(std::string name, int from = -1);
  int add(std::string name, std::vector<int> inputs);
  int concat(std::string name, std::vector<int> inputs);
  int embedding(std::string name, std::int64_t rows, std::int64_t dim, bool positions = false);
  // Self-attention over one fused QKV input (3·d channels) or three inputs (q, k, v).
  int attention(std::string name, std::int64_t heads, bool causal, double dropout_p,
                std::vector<int> inputs);
  int select_token(std::string name, std::int64_t token, int from = -1);
  int loss(std::string name, int from = -1);

  // Appends any layer (inputs default to the last layer); returns its index.
  int append(Layer layer);
  Model build() &&;

 private:
  int simple(std::string name, LayerKind kind, int from);

  Model model_;
};

}  // namespace scalecast::models
