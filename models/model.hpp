#pragma once
// A network: its input, its layers in a topological order (each reads only earlier layers) and
// the optimizer it is normally trained with. Shape inference walks the layers once and gives
// every layer's output shape and trainable parameters for a chosen sequence length; it is where
// a wrong model description (a kernel larger than its input, an add of mismatched shapes) is
// reported, at the layer's position in the model file.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/layer.hpp"

namespace scalecast::models {

enum class OptimizerKind {
  kSgdMomentum,  // SGD with momentum and weight decay (the CNN recipe)
  kAdam,         // Adam / AdamW (the transformer recipe)
};

std::string_view to_string(OptimizerKind k);
// Accepts "sgd_momentum" (or "sgd") and "adam" (or "adamw"); nullopt otherwise.
std::optional<OptimizerKind> parse_optimizer(std::string_view text);

struct ModelInput {
  bool tokens = false;  // false: an image C×H×W; true: a sequence of token ids
  std::int64_t c = 3, h = 224, w = 224;
  std::int64_t seq_len = 0;  // tokens: default sequence length
};

struct Model {
  std::string name;
  std::string source = "zoo";  // file the description came from (error messages)
  ModelInput input;
  std::vector<Layer> layers;  // layers[0] is the input (kind kInput, name "input")
  OptimizerKind optimizer = OptimizerKind::kSgdMomentum;
};

// Shapes and parameters of every layer for one sequence length.
struct ModelShapes {
  std::int64_t seq_len = 0;          // 0 for image models
  std::vector<TensorShape> out;      // per layer: output shape per sample
  std::vector<std::int64_t> params;  // per layer: trainable parameters
  std::int64_t total_params = 0;
};

// Infers every layer's output shape and parameter count. `seq_len` 0 takes the model default.
// Throws common::ConfigError (at the layer's file position when known) for an impossible layer.
ModelShapes infer_shapes(const Model& model, std::int64_t seq_len = 0);

// The layers that read each layer (index → consumer indices, each once, ascending).
std::vector<std::vector<int>> consumers(const Model& model);

// Index of a layer by name, or -1.
int find_layer(const Model& model, std::string_view name);

}  // namespace scalecast::models
