#include "models/zoo.hpp"

#include <fmt/format.h>

#include <functional>
#include <stdexcept>

#include "common/config_node.hpp"
#include "models/model_yaml.hpp"
#include "models/transformer.hpp"

namespace scalecast::models {
namespace {

struct Maker {
  ZooEntry entry;
  std::function<Model()> make;
};

const std::vector<Maker>& makers() {
  static const std::vector<Maker> m = {
      {{"resnet50", "ResNet-50 v1.5 (torchvision resnet50), 224×224"},
       [] { return make_resnet("resnet50", 50, false); }},
      {{"resnet50_v1", "ResNet-50 v1 (stride on the first 1×1), 224×224"},
       [] { return make_resnet("resnet50_v1", 50, true); }},
      {{"resnet101", "ResNet-101 v1.5, 224×224"},
       [] { return make_resnet("resnet101", 101, false); }},
      {{"resnet101_v1", "ResNet-101 v1, 224×224"},
       [] { return make_resnet("resnet101_v1", 101, true); }},
      {{"resnet152", "ResNet-152 v1.5, 224×224"},
       [] { return make_resnet("resnet152", 152, false); }},
      {{"resnet152_v1", "ResNet-152 v1, 224×224"},
       [] { return make_resnet("resnet152_v1", 152, true); }},
      {{"vgg16", "VGG-16 (config D), 224×224"}, [] { return make_vgg16(); }},
      {{"alexnet", "AlexNet (torchvision single-tower variant), 224×224"},
       [] { return make_alexnet(); }},
      {{"googlenet", "GoogLeNet / Inception v1 without aux heads (published weights), 224×224"},
       [] { return make_googlenet(false); }},
      {{"googlenet_aux", "GoogLeNet with both auxiliary heads (as trained), 224×224"},
       [] { return make_googlenet(true); }},
      {{"inception_v3", "Inception-v3 with AuxLogits (as trained), 299×299"},
       [] { return make_inception_v3(true); }},
      {{"inception_v3_noaux", "Inception-v3 without AuxLogits, 299×299"},
       [] { return make_inception_v3(false); }},
      {{"bert_large", "BERT-large encoder + pooler, sequence length 128 (up to 512)"},
       [] { return make_bert_large(false); }},
      {{"bert_large_pretrain", "BERT-large with MLM and NSP pre-training heads, sequence 128"},
       [] { return make_bert_large(true); }},
      {{"gpt2_small", "GPT-2 small (124M): 12 layers, d 768, 12 heads, context 1024"},
       [] { return make_gpt2("gpt2_small", 12, 768, 12); }},
      {{"gpt2_medium", "GPT-2 medium (355M): 24 layers, d 1024, 16 heads"},
       [] { return make_gpt2("gpt2_medium", 24, 1024, 16); }},
      {{"gpt2_large", "GPT-2 large (774M): 36 layers, d 1280, 20 heads"},
       [] { return make_gpt2("gpt2_large", 36, 1280, 20); }},
      {{"gpt2_xl", "GPT-2 XL (1558M): 48 layers, d 1600, 25 heads"},
       [] { return make_gpt2("gpt2_xl", 48, 1600, 25); }},
  };
  return m;
}

bool looks_like_path(const std::string& s) {
  auto ends = [&](std::string_view suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix.data()) == 0;
  };
  return s.find('/') != std::string::npos || ends(".yaml") || ends(".yml");
}

}  // namespace

const std::vector<ZooEntry>& zoo_entries() {
  static const std::vector<ZooEntry> e = [] {
    std::vector<ZooEntry> v;
    for (const auto& m : makers()) v.push_back(m.entry);
    return v;
  }();
  return e;
}

std::vector<std::string> zoo_names() {
  std::vector<std::string> v;
  for (const auto& m : makers()) v.emplace_back(m.entry.name);
  return v;
}

Model zoo_model(std::string_view name) {
  for (const auto& m : makers()) {
    if (m.entry.name == name) return m.make();
  }
  if (find_transformer(name)) {
    throw std::invalid_argument(fmt::format(
        "'{}' is a transformer of the LLM zoo: it trains with a `parallel:` map (tensor, pipeline, "
        "context, data parallelism), not as a data-parallel layer graph",
        name));
  }
  std::vector<std::string> all = zoo_names();
  for (std::string& t : transformer_names()) all.push_back(std::move(t));
  const std::string close = common::closest_match(name, all);
  throw std::invalid_argument(
      close.empty() ? fmt::format("unknown model '{}' (zoo: {})", name, fmt::join(all, ", "))
                    : fmt::format("unknown model '{}' (did you mean '{}'?)", name, close));
}

Model load_model(const std::string& name_or_path) {
  if (looks_like_path(name_or_path)) return load_model_file(name_or_path);
  return zoo_model(name_or_path);
}

}  // namespace scalecast::models
