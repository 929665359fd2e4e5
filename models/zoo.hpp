#pragma once
// The model zoo: the networks people train on supercomputers, built layer by layer from their
// canonical definitions (torchvision, google-research/bert, OpenAI GPT-2; [torchvision],
// [BERT-config], [GPT-2-hparams]), and load_model(), which takes a zoo name or the path of a user's
// model YAML file.

#include <string>
#include <string_view>
#include <vector>

#include "models/model.hpp"
#include "models/model_builder.hpp"

namespace scalecast::models {

struct ZooEntry {
  std::string_view name;         // e.g. "resnet50"
  std::string_view description;  // one line for `describe`
};

const std::vector<ZooEntry>& zoo_entries();
std::vector<std::string> zoo_names();

// A zoo model by name; throws std::invalid_argument naming the closest zoo name when unknown.
Model zoo_model(std::string_view name);

// A zoo name, or a path to a model YAML file (anything containing '/' or ending in .yaml/.yml).
// Throws common::ConfigError for a bad file and std::invalid_argument for an unknown name.
Model load_model(const std::string& name_or_path);

// Building blocks shared by the zoo and by tests that write the same network in YAML.
// torchvision Bottleneck (stride on the 3×3 for v1.5, on the first 1×1 for v1); returns the
// block output (after the final ReLU).
int add_bottleneck(ModelBuilder& b, const std::string& prefix, int from, std::int64_t width,
                   std::int64_t stride, bool downsample, bool v1);
// torchvision BasicConv2d: conv without bias, BatchNorm, ReLU; returns the ReLU.
int add_basic_conv(ModelBuilder& b, const std::string& prefix, int from, std::int64_t out,
                   std::int64_t kernel_h, std::int64_t kernel_w, std::int64_t stride,
                   std::int64_t pad_h, std::int64_t pad_w);

// Builders behind the zoo names (one file per family).
Model make_resnet(std::string name, int depth, bool v1);
Model make_vgg16();
Model make_alexnet();
Model make_googlenet(bool aux);
Model make_inception_v3(bool aux);
Model make_bert_large(bool heads);
Model make_gpt2(std::string name, std::int64_t layers, std::int64_t width, std::int64_t heads);

}  // namespace scalecast::models
