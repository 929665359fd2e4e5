// ResNet (v1.5 and v1), VGG-16 and AlexNet as torchvision defines them ([torchvision]).
#include <fmt/format.h>

#include <array>
#include <stdexcept>

#include "models/zoo.hpp"

namespace scalecast::models {
namespace {

ModelInput image(std::int64_t size) { return {false, 3, size, size, 0}; }

}  // namespace

int add_bottleneck(ModelBuilder& b, const std::string& p, int from, std::int64_t width,
                   std::int64_t stride, bool downsample, bool v1) {
  // v1.5 (torchvision, NVIDIA DLE) strides the 3×3; v1 (paper, Caffe) the first 1×1 [DLE-RN50].
  const std::int64_t s1 = v1 ? stride : 1, s2 = v1 ? 1 : stride;
  b.conv(p + "conv1", width, 1, s1, 0, false, from);
  b.batch_norm(p + "bn1");
  b.relu(p + "relu1");
  b.conv(p + "conv2", width, 3, s2, 1);
  b.batch_norm(p + "bn2");
  b.relu(p + "relu2");
  b.conv(p + "conv3", 4 * width, 1, 1, 0);
  const int main = b.batch_norm(p + "bn3");
  int shortcut = from;
  if (downsample) {
    b.conv(p + "downsample.0", 4 * width, 1, stride, 0, false, from);
    shortcut = b.batch_norm(p + "downsample.1");
  }
  b.add(p + "add", {main, shortcut});
  return b.relu(p + "relu3");
}

Model make_resnet(std::string name, int depth, bool v1) {
  std::array<int, 4> blocks{};
  switch (depth) {  // [torchvision]: blocks per stage
    case 50:
      blocks = {3, 4, 6, 3};
      break;
    case 101:
      blocks = {3, 4, 23, 3};
      break;
    case 152:
      blocks = {3, 8, 36, 3};
      break;
    default:
      throw std::invalid_argument(fmt::format("no ResNet-{} (50, 101 or 152)", depth));
  }
  ModelBuilder b(std::move(name), image(224), OptimizerKind::kSgdMomentum);
  b.conv("conv1", 64, 7, 2, 3, false, ModelBuilder::kInput);
  b.batch_norm("bn1");
  b.relu("relu");
  int x = b.max_pool("maxpool", 3, 2, 1);
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t width = std::int64_t{64} << stage;
    for (int i = 0; i < blocks[static_cast<std::size_t>(stage)]; ++i) {
      const std::string prefix = fmt::format("layer{}.{}.", stage + 1, i);
      x = add_bottleneck(b, prefix, x, width, (i == 0 && stage > 0) ? 2 : 1, i == 0, v1);
    }
  }
  b.global_avg_pool("avgpool");
  b.flatten("flatten");
  b.linear("fc", 1000);
  b.loss("loss");
  return std::move(b).build();
}

Model make_vgg16() {
  ModelBuilder b("vgg16", image(224), OptimizerKind::kSgdMomentum);
  // Config "D": channel counts, 0 = 2×2/2 max pool.
  const std::array<int, 18> cfg{64, 64,  0,   128, 128, 0,   256, 256, 256,
                                0,  512, 512, 512, 0,   512, 512, 512, 0};
  int index = 0;  // torchvision's index in `features`
  for (int c : cfg) {
    if (c == 0) {
      b.max_pool(fmt::format("features.{}", index++), 2, 2, 0);
    } else {
      b.conv(fmt::format("features.{}", index++), c, 3, 1, 1, true);
      b.relu(fmt::format("features.{}", index++));
    }
  }
  b.adaptive_avg_pool("avgpool", 7, 7);
  b.flatten("flatten");
  b.linear("classifier.0", 4096);
  b.relu("classifier.1");
  b.dropout("classifier.2", 0.5);
  b.linear("classifier.3", 4096);
  b.relu("classifier.4");
  b.dropout("classifier.5", 0.5);
  b.linear("classifier.6", 1000);
  b.loss("loss");
  return std::move(b).build();
}

Model make_alexnet() {
  ModelBuilder b("alexnet", image(224), OptimizerKind::kSgdMomentum);
  b.conv("features.0", 64, 11, 4, 2, true, ModelBuilder::kInput);
  b.relu("features.1");
  b.max_pool("features.2", 3, 2, 0);
  b.conv("features.3", 192, 5, 1, 2, true);
  b.relu("features.4");
  b.max_pool("features.5", 3, 2, 0);
  b.conv("features.6", 384, 3, 1, 1, true);
  b.relu("features.7");
  b.conv("features.8", 256, 3, 1, 1, true);
  b.relu("features.9");
  b.conv("features.10", 256, 3, 1, 1, true);
  b.relu("features.11");
  b.max_pool("features.12", 3, 2, 0);
  b.adaptive_avg_pool("avgpool", 6, 6);
  b.flatten("flatten");
  b.dropout("classifier.0", 0.5);
  b.linear("classifier.1", 4096);
  b.relu("classifier.2");
  b.dropout("classifier.3", 0.5);
  b.linear("classifier.4", 4096);
  b.relu("classifier.5");
  b.linear("classifier.6", 1000);
  b.loss("loss");
  return std::move(b).build();
}

}  // namespace scalecast::models
