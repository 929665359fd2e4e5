#pragma once
// A layer of a network as the user (or the zoo) describes it: a kind, its hyper-parameters and
// the earlier layers it reads. A layer is not yet work: shape inference (model.hpp) fixes its
// tensor shapes for a sequence length, and the training-step builder turns it into forward and
// backward ops. Shapes are per sample (image or sequence); the batch multiplies them later.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalecast::models {

enum class LayerKind {
  kInput,                // the model input (always layer 0): an image C×H×W or S token ids
  kConv,                 // 2-D convolution
  kLinear,               // fully connected; applied to the channel dim at every position
  kBatchNorm,            // batch normalisation over channels (γ, β trainable)
  kLayerNorm,            // layer normalisation over channels (γ, β trainable)
  kRelu,                 // elementwise activations
  kGelu,                 //
  kTanh,                 //
  kDropout,              // elementwise mask (training mode)
  kAdd,                  // elementwise sum of 2+ inputs of the same shape (residual add)
  kConcat,               // channel concatenation of 2+ inputs (Inception branches)
  kMaxPool,              // window pooling (kernel, stride, padding, ceil_mode)
  kAvgPool,              //
  kAdaptiveAvgPool,      // average pool to a fixed output H×W
  kGlobalAvgPool,        // average over H×W to 1×1
  kFlatten,              // C×H×W → (C·H·W)×1×1, a view
  kEmbedding,            // table lookup: token ids (or positions 0..S-1) → dim × S
  kAttention,            // multi-head scaled dot-product attention as QKᵀ and AV batched GEMMs
  kSelectToken,          // one token of a sequence (BERT's [CLS] for the pooler), a view
  kSoftmaxCrossEntropy,  // the loss on logits
};

// Name used in model YAML files and tables ("conv", "batch_norm", ...).
std::string_view to_string(LayerKind kind);
std::optional<LayerKind> parse_layer_kind(std::string_view text);
// Every accepted YAML type name, in declaration order (for "expected one of" messages).
const std::vector<std::string>& layer_kind_names();

// Per-sample tensor shape. Images are C×H×W; a sequence of S tokens with d features is d×S×1.
struct TensorShape {
  std::int64_t c = 0, h = 1, w = 1;
  std::int64_t elements() const { return c * h * w; }
  friend bool operator==(const TensorShape&, const TensorShape&) = default;
};

std::string to_string(const TensorShape& s);  // "64×56×56"

struct Layer {
  std::string name;  // unique in the model, e.g. "layer1.0.conv2"
  LayerKind kind = LayerKind::kInput;
  std::vector<int> inputs;  // indices of earlier layers (0 = the model input)

  std::int64_t out = 0;  // conv out_channels, linear out_features, embedding dim
  std::int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  std::int64_t groups = 1;
  bool bias = false;                  // conv, linear
  bool ceil_mode = false;             // max/avg pool
  std::int64_t out_h = 1, out_w = 1;  // adaptive pool output
  std::int64_t rows = 0;              // embedding table rows (vocabulary or positions)
  bool positions = false;             // embedding reads positions 0..S-1 instead of token ids
  std::int64_t heads = 1;             // attention
  bool causal = false;     // attention mask (same cost: frameworks compute all S×S scores)
  double dropout_p = 0.0;  // dropout; attention: dropout on the probabilities when > 0
  int tied_to = -1;        // linear: weight shared with this embedding layer (no own weight)
  std::int64_t token = 0;  // select_token: which position

  // Where a model file defined the layer (1-based; 0 when built in code), for shape errors.
  int line = 0, column = 0;
};

// Trainable tensors of a layer (PyTorch's names: "weight", "bias"), given its input shape.
struct ParamTensor {
  const char* suffix;  // "weight" or "bias"
  std::int64_t params;
};
std::vector<ParamTensor> param_tensors(const Layer& layer, const TensorShape& input);

}  // namespace scalecast::models
