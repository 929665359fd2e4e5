// The training-step DAG: order, dependencies, backward consistency (docs/sources.md, Conventions:
// backward pass), gradient readiness and bucketing, the Boost graph and the optimizer ops.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <boost/graph/topological_sort.hpp>
#include <map>
#include <set>

#include "models/training_step.hpp"
#include "models/zoo.hpp"

using namespace scalecast::models;

namespace {

const Op* find_op(const TrainingStep& s, const std::string& name) {
  for (const Op& op : s.ops()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

OpId id_of(const TrainingStep& s, const std::string& name) {
  const Op* op = find_op(s, name);
  REQUIRE_MESSAGE(op != nullptr, "no op ", name);
  return static_cast<OpId>(op - s.ops().data());
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("conv and linear backward is twice forward per layer and the first conv has no dgrad") {
    for (const char* name :
         {"resnet50", "resnet50_v1", "vgg16", "alexnet", "googlenet_aux", "inception_v3"}) {
      const Model m = zoo_model(name);
      const TrainingStep s = build_training_step(m, {});
      // layer -> forward, dgrad and wgrad FLOPs of its matrix ops
      std::map<int, std::array<double, 3>> f;
      for (const Op& op : s.ops()) {
        if (op.op_class != OpClass::kConv && op.op_class != OpClass::kGemm) continue;
        const int slot = op.pass == Pass::kForward ? 0 : op.pass == Pass::kBackwardData ? 1 : 2;
        f[op.layer][static_cast<std::size_t>(slot)] += op.flops;
      }
      int first = 0, checked = 0;
      for (const auto& [layer, v] : f) {
        INFO(fmt::format("{} {}: fwd {:.0f} dgrad {:.0f} wgrad {:.0f}", name,
                         m.layers[static_cast<std::size_t>(layer)].name, v[0], v[1], v[2]));
        CHECK(v[2] == v[0]);  // wgrad MACs = forward MACs
        if (m.layers[static_cast<std::size_t>(layer)].inputs[0] == 0) {
          ++first;
          CHECK(v[1] == 0.0);  // the input needs no gradient
        } else {
          CHECK(v[1] == v[0]);  // dgrad MACs = forward MACs
        }
        ++checked;
      }
      MESSAGE(
          fmt::format("{}: {} conv/linear layers checked, {} without dgrad", name, checked, first));
      CHECK(first == 1);
    }
  }

  TEST_CASE("ResNet-50 training MACs per image are 3x forward minus the first conv") {
    const TrainingStep s = build_training_step(zoo_model("resnet50"), {});
    const double train = s.totals().forward_macs + s.totals().backward_macs;
    MESSAGE(
        fmt::format("ResNet-50 training MACs/image expected 12149538816 actual {:.0f} "
                    "({:.2f} GFLOP)",
                    train, 2 * train / 1e9));
    CHECK(train == 12'149'538'816.0);  // docs/sources.md, Conventions: backward pass
    CHECK(s.totals().backward_macs == 2.0 * 4'089'184'256.0 - 118'013'952.0);
  }

  TEST_CASE("ops are in topological order: forward then loss then backward then optimizer") {
    for (const char* name : {"resnet50", "googlenet_aux", "bert_large_pretrain"}) {
      const TrainingStep s = build_training_step(zoo_model(name), {});
      auto rank = [](Pass p) {
        switch (p) {
          case Pass::kForward:
            return 0;
          case Pass::kLoss:
            return 1;
          case Pass::kOptimizer:
            return 3;
          default:
            return 2;
        }
      };
      int prev = 0;
      std::set<std::string> names;
      for (OpId i = 0; i < s.ops().size(); ++i) {
        const Op& op = s.ops()[i];
        INFO(name, " op ", op.name);
        CHECK(rank(op.pass) >= prev);
        prev = rank(op.pass);
        for (OpId p : s.predecessors(i)) CHECK(p < i);
        CHECK(names.insert(op.name).second);  // unique names
        if (i > 0 && op.pass != Pass::kForward) CHECK(!s.predecessors(i).empty());
      }
      CHECK(s.ops().back().pass == Pass::kOptimizer);
    }
  }

  TEST_CASE("backward dependencies follow the gradient flow") {
    const TrainingStep s = build_training_step(zoo_model("resnet50"), {});
    // conv3's dgrad and wgrad both wait for bn3's backward (its output gradient).
    const OpId bn3 = id_of(s, "layer4.2.bn3.bwd");
    CHECK(s.predecessors(id_of(s, "layer4.2.conv3.dgrad")) == std::vector<OpId>{bn3});
    CHECK(s.predecessors(id_of(s, "layer4.2.conv3.wgrad")) == std::vector<OpId>{bn3});
    // bn2's backward waits for conv3's dgrad through relu2.
    CHECK(s.predecessors(id_of(s, "layer4.2.relu2.bwd")) ==
          std::vector<OpId>{id_of(s, "layer4.2.conv3.dgrad")});
    // A block input feeds conv1 and the identity shortcut: autograd sums both gradients.
    const OpId acc = id_of(s, "layer1.0.relu3.grad_accum");
    const std::vector<OpId> expected{id_of(s, "layer1.1.conv1.dgrad"),
                                     id_of(s, "layer1.1.relu3.bwd")};
    CHECK(s.predecessors(acc) == expected);
    // The first conv has only wgrad, after bn1's backward.
    CHECK(find_op(s, "conv1.dgrad") == nullptr);
    CHECK(s.predecessors(id_of(s, "conv1.wgrad")) == std::vector<OpId>{id_of(s, "bn1.bwd")});
    // The loss gradient seeds backward; fc's gradients depend on it.
    CHECK(s.predecessors(id_of(s, "fc.wgrad")) == std::vector<OpId>{id_of(s, "loss.grad")});
  }

  TEST_CASE("gradients are in ready order from fc to conv1") {
    const TrainingStep s = build_training_step(zoo_model("resnet50"), {});
    const auto& g = s.gradients();
    REQUIRE(g.size() == 161);
    CHECK(g.front().name == "fc.weight");
    CHECK(g[1].name == "fc.bias");
    CHECK(g.back().name == "conv1.weight");
    for (std::size_t i = 0; i < g.size(); ++i) {
      INFO(g[i].name);
      if (i > 0) CHECK(g[i].ready_after >= g[i - 1].ready_after);
      const Op& producer = s.ops()[g[i].ready_after];
      CHECK(producer.layer == g[i].layer);
      CHECK(producer.pass != Pass::kForward);
      if (g[i].name.ends_with("conv1.weight")) CHECK(producer.pass == Pass::kBackwardWeight);
    }
  }

  TEST_CASE("buckets fuse consecutive ready gradients up to the bucket size") {
    const TrainingStep s = build_training_step(zoo_model("resnet50"), {});
    const auto one = s.buckets(0);
    CHECK(one.size() == s.gradients().size());
    for (double cap : {1e6, 25.0 * 1024 * 1024, 64.0 * 1024 * 1024, 1e12}) {
      const auto b = s.buckets(cap);
      std::size_t next = 0;
      double total = 0;
      for (const auto& bucket : b) {
        REQUIRE(!bucket.tensors.empty());
        double bytes = 0;
        for (std::size_t t : bucket.tensors) {
          CHECK(t == next++);  // consecutive, in ready order
          bytes += s.gradients()[t].bytes;
        }
        CHECK(bucket.bytes == bytes);
        CHECK((bucket.bytes <= cap || bucket.tensors.size() == 1));
        CHECK(bucket.ready_after == s.gradients()[bucket.tensors.back()].ready_after);
        total += bytes;
      }
      CHECK(next == s.gradients().size());
      CHECK(total == s.totals().gradient_bytes);
      MESSAGE(fmt::format("ResNet-50 fp32, bucket {:.0f} B: {} buckets", cap, b.size()));
    }
    CHECK(s.buckets(1e12).size() == 1);
  }

  TEST_CASE("the Boost graph mirrors the op list and sorts topologically") {
    const TrainingStep s = build_training_step(zoo_model("inception_v3"), {});
    const auto& g = s.graph();
    std::size_t edges = 0;
    for (OpId i = 0; i < s.ops().size(); ++i) {
      edges += s.predecessors(i).size();
      CHECK(boost::in_degree(i, g) == s.predecessors(i).size());
    }
    CHECK(boost::num_vertices(g) == s.ops().size());
    CHECK(boost::num_edges(g) == edges);
    std::vector<std::size_t> order;
    boost::topological_sort(g, std::back_inserter(order));  // throws on a cycle
    CHECK(order.size() == s.ops().size());
    CHECK(s.critical_path_flops() > 0.0);
    CHECK(s.critical_path_flops() <=
          s.totals().forward_flops + s.totals().backward_flops + s.totals().optimizer_flops);
  }

  TEST_CASE("a concatenation is a device-memory copy on the compute stream, not a host copy") {
    // Regression: torch.cat was emitted as a memcpy, which the cost model prices at the GPU's
    // host link and the engine puts on the copy stream.
    const TrainingStep s = build_training_step(zoo_model("inception_v3"), {});
    int concats = 0;
    for (const Op& op : s.ops()) {
      CHECK(op.op_class != OpClass::kMemcpy);
      if (op.name.find("cat") != std::string::npos && op.pass == Pass::kForward &&
          op.flops == 0.0) {
        ++concats;
        CHECK(op.op_class == OpClass::kElementwise);
        CHECK(op.bytes_read == op.bytes_written);  // every input read once, the output written
      }
    }
    CHECK(concats > 0);
  }

  TEST_CASE("optimizer as one fused op or one op per tensor") {
    const Model m = zoo_model("resnet50");
    StepOptions o;
    const TrainingStep fused = build_training_step(m, o);
    const Op& step = fused.ops().back();
    CHECK(step.name == "optimizer.step");
    CHECK(step.elements == 25'557'032);
    CHECK(fused.predecessors(fused.ops().size() - 1).size() == 108);  // distinct producers
    for (const auto& g : fused.gradients()) CHECK(g.update_op == fused.ops().size() - 1);
    o.optimizer_ops = OptimizerOps::kPerTensor;
    const TrainingStep per = build_training_step(m, o);
    std::int64_t params = 0;
    for (const auto& g : per.gradients()) {
      const Op& u = per.ops()[g.update_op];
      CHECK(u.op_class == OpClass::kOptimizer);
      CHECK(u.name == "optimizer." + g.name);
      CHECK(per.predecessors(g.update_op) == std::vector<OpId>{g.ready_after});
      params += u.elements;
    }
    CHECK(params == 25'557'032);
    CHECK(per.ops().size() == fused.ops().size() - 1 + per.gradients().size());
  }

  TEST_CASE("work scales with the batch") {
    const Model m = zoo_model("resnet50");
    StepOptions o;
    const TrainingStep one = build_training_step(m, o);
    o.batch = 256;
    const TrainingStep big = build_training_step(m, o);
    CHECK(big.totals().forward_macs == 256.0 * one.totals().forward_macs);
    CHECK(big.totals().forward_flops == doctest::Approx(256.0 * one.totals().forward_flops));
    CHECK(big.totals().gradient_bytes == one.totals().gradient_bytes);
    CHECK(find_op(big, "layer1.0.conv2")->conv.n == 256);
    CHECK(find_op(big, "fc")->gemm.n == 256);
    o.batch = 0;
    CHECK_THROWS_AS(build_training_step(m, o), std::invalid_argument);
  }
}
