#pragma once
// StepAssembler: the one-pass builder behind build_training_step(). It walks the model's layers
// forward (emitting each layer's forward ops), appends the loss ops, walks them in reverse
// (gradient accumulation where an output feeds several layers, then each layer's dgrad, wgrad
// and elementwise/normalisation backward ops), and ends with the optimizer. Internal to models/.

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "models/training_step.hpp"

namespace scalecast::models {

class StepAssembler {
 public:
  StepAssembler(const Model& model, const StepOptions& options);
  TrainingStep run();

 private:
  // Data types and sizes the precision recipe gives each kind of op.
  struct Recipe {
    common::DType act = common::DType::kFp32;     // activations, memory-bound ops
    common::DType matrix = common::DType::kFp32;  // conv and GEMM
    bool tensor_core = false;
    double act_bytes = 4.0;   // bytes per activation element
    double grad_bytes = 4.0;  // bytes per gradient element
  };

  Op make(int layer, const char* suffix, OpClass c, Pass p) const;
  OpId emit(Op op, const std::vector<OpId>& preds);
  OpId emit(Op op, std::initializer_list<OpId> preds);
  void add_gradient(int layer, const char* suffix, std::int64_t params, OpId producer);

  void forward(int i);
  void forward_attention(int i, const std::vector<OpId>& preds);
  void backward(int i);
  void backward_attention(int i);
  void losses();
  void optimizer();
  void finish();

  const Model& model_;
  StepOptions options_;
  ModelShapes shapes_;
  std::vector<std::vector<int>> consumers_;
  Recipe recipe_;
  std::int64_t n_ = 1;  // batch
  TrainingStep step_;

  std::vector<std::vector<OpId>> ready_;       // per layer: ops after which its output exists
  std::vector<std::vector<OpId>> grad_ready_;  // ops after which d(loss)/d(output) exists
  std::vector<std::vector<OpId>> dx_ready_;    // ops after which d(loss)/d(inputs) exist
  std::vector<OpId> loss_op_;                  // per layer: its (explicit or implicit) loss op
  std::vector<char> requires_grad_;
  std::vector<std::vector<OpId>> tied_wgrads_;  // per embedding: wgrads of tied linears
};

}  // namespace scalecast::models
