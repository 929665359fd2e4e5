#include "models/training_step.hpp"

#include <algorithm>

#include "models/step_assembler.hpp"

namespace scalecast::models {

void StepAssembler::finish() {
  const auto& ops = step_.ops_;
  const std::size_t count = model_.layers.size();
  auto& rows = step_.layers_;
  rows.resize(count);
  for (std::size_t u = 0; u < count; ++u) {
    const Layer& l = model_.layers[u];
    rows[u].name = l.name;
    rows[u].kind = l.kind;
    rows[u].in =
        l.inputs.empty() ? shapes_.out[u] : shapes_.out[static_cast<std::size_t>(l.inputs[0])];
    rows[u].out = shapes_.out[u];
    rows[u].params = shapes_.params[u];
  }
  StepTotals& t = step_.totals_;
  t = {};
  for (const Op& op : ops) {
    const bool matrix = op.op_class == OpClass::kConv || op.op_class == OpClass::kGemm;
    const bool fwd = op.pass == Pass::kForward || op.pass == Pass::kLoss;
    const bool bwd = op.pass == Pass::kBackwardData || op.pass == Pass::kBackwardWeight;
    if (fwd) t.forward_flops += op.flops;
    if (bwd) t.backward_flops += op.flops;
    if (op.pass == Pass::kOptimizer) t.optimizer_flops += op.flops;
    if (matrix && fwd) t.forward_macs += op.flops / 2.0;
    if (matrix && bwd) t.backward_macs += op.flops / 2.0;
    if (op.layer >= 0 && op.pass != Pass::kOptimizer) {
      LayerSummary& r = rows[static_cast<std::size_t>(op.layer)];
      if (fwd) r.fwd_flops += op.flops;
      if (bwd) r.bwd_flops += op.flops;
      if (matrix && fwd) r.fwd_macs += op.flops / 2.0;
    }
  }
  t.params = shapes_.total_params;
  for (const auto& g : step_.gradients_) t.gradient_bytes += g.bytes;
  t.op_count = ops.size();

  step_.graph_ = TrainingStep::Graph(ops.size());
  for (OpId v = 0; v < ops.size(); ++v) {
    for (OpId p : step_.preds_[v]) boost::add_edge(p, v, step_.graph_);
  }
}

std::vector<GradientBucket> TrainingStep::buckets(double bucket_bytes) const {
  std::vector<GradientBucket> out;
  for (std::size_t i = 0; i < gradients_.size(); ++i) {
    const GradientTensor& g = gradients_[i];
    if (out.empty() || bucket_bytes <= 0.0 || out.back().bytes + g.bytes > bucket_bytes) {
      out.emplace_back();
    }
    GradientBucket& b = out.back();
    b.tensors.push_back(i);
    b.bytes += g.bytes;
    b.ready_after = std::max(b.ready_after, g.ready_after);
  }
  return out;
}

double TrainingStep::critical_path_flops() const {
  std::vector<double> best(ops_.size(), 0.0);
  double longest = 0.0;
  for (OpId v = 0; v < ops_.size(); ++v) {  // ops_ is a topological order
    double before = 0.0;
    for (OpId p : preds_[v]) before = std::max(before, best[p]);
    best[v] = before + ops_[v].flops;
    longest = std::max(longest, best[v]);
  }
  return longest;
}

TrainingStep build_training_step(const Model& model, const StepOptions& options) {
  return StepAssembler(model, options).run();
}

}  // namespace scalecast::models
