// GoogLeNet (Inception v1) and Inception-v3 as torchvision defines them ([torchvision]).
#include <fmt/format.h>

#include "models/zoo.hpp"

namespace scalecast::models {
namespace {

int conv_bn(ModelBuilder& b, const std::string& name, int from, std::int64_t out, std::int64_t k,
            std::int64_t stride = 1, std::int64_t pad = 0) {
  return add_basic_conv(b, name + ".", from, out, k, k, stride, pad, pad);
}

// torchvision Inception (GoogLeNet) module: four branches, concatenated. Branch 3 is a 3×3
// (pytorch/vision issue 906), not the paper's 5×5.
int inception_v1(ModelBuilder& b, const std::string& p, int x, std::int64_t c1, std::int64_t r3,
                 std::int64_t c3, std::int64_t r5, std::int64_t c5, std::int64_t pool) {
  const int b1 = conv_bn(b, p + "branch1", x, c1, 1);
  conv_bn(b, p + "branch2.0", x, r3, 1);
  const int b2 = conv_bn(b, p + "branch2.1", b.last(), c3, 3, 1, 1);
  conv_bn(b, p + "branch3.0", x, r5, 1);
  const int b3 = conv_bn(b, p + "branch3.1", b.last(), c5, 3, 1, 1);
  b.max_pool(p + "branch4.0", 3, 1, 1, true, x);
  const int b4 = conv_bn(b, p + "branch4.1", b.last(), pool, 1);
  return b.concat(p + "cat", {b1, b2, b3, b4});
}

// GoogLeNet InceptionAux: adaptive pool 4×4, 1×1 conv to 128, fc 2048→1024, ReLU, dropout 0.7,
// fc 1024→1000, and its own loss (weighted 0.3 in training; the weight costs nothing).
void googlenet_aux(ModelBuilder& b, const std::string& p, int x) {
  b.adaptive_avg_pool(p + "pool", 4, 4, x);
  conv_bn(b, p + "conv", b.last(), 128, 1);
  b.flatten(p + "flatten");
  b.linear(p + "fc1", 1024);
  b.relu(p + "relu");
  b.dropout(p + "dropout", 0.7);
  b.linear(p + "fc2", 1000);
  b.loss(p + "loss");
}

int inception_a(ModelBuilder& b, const std::string& p, int x, std::int64_t pool_features) {
  const int b1 = conv_bn(b, p + "branch1x1", x, 64, 1);
  conv_bn(b, p + "branch5x5_1", x, 48, 1);
  const int b5 = conv_bn(b, p + "branch5x5_2", b.last(), 64, 5, 1, 2);
  conv_bn(b, p + "branch3x3dbl_1", x, 64, 1);
  conv_bn(b, p + "branch3x3dbl_2", b.last(), 96, 3, 1, 1);
  const int b3 = conv_bn(b, p + "branch3x3dbl_3", b.last(), 96, 3, 1, 1);
  b.avg_pool(p + "branch_pool.avg", 3, 1, 1, x);
  const int bp = conv_bn(b, p + "branch_pool", b.last(), pool_features, 1);
  return b.concat(p + "cat", {b1, b5, b3, bp});
}

int inception_b(ModelBuilder& b, const std::string& p, int x) {
  const int b3 = conv_bn(b, p + "branch3x3", x, 384, 3, 2);
  conv_bn(b, p + "branch3x3dbl_1", x, 64, 1);
  conv_bn(b, p + "branch3x3dbl_2", b.last(), 96, 3, 1, 1);
  const int bd = conv_bn(b, p + "branch3x3dbl_3", b.last(), 96, 3, 2);
  const int bp = b.max_pool(p + "branch_pool", 3, 2, 0, false, x);
  return b.concat(p + "cat", {b3, bd, bp});
}

int inception_c(ModelBuilder& b, const std::string& p, int x, std::int64_t c7) {
  auto k17 = [&](const std::string& n, std::int64_t out) {  // 1×7, pad (0, 3)
    return add_basic_conv(b, p + n + ".", b.last(), out, 1, 7, 1, 0, 3);
  };
  auto k71 = [&](const std::string& n, std::int64_t out) {  // 7×1, pad (3, 0)
    return add_basic_conv(b, p + n + ".", b.last(), out, 7, 1, 1, 3, 0);
  };
  const int b1 = conv_bn(b, p + "branch1x1", x, 192, 1);
  conv_bn(b, p + "branch7x7_1", x, c7, 1);
  k17("branch7x7_2", c7);
  const int b7 = k71("branch7x7_3", 192);
  conv_bn(b, p + "branch7x7dbl_1", x, c7, 1);
  k71("branch7x7dbl_2", c7);
  k17("branch7x7dbl_3", c7);
  k71("branch7x7dbl_4", c7);
  const int bd = k17("branch7x7dbl_5", 192);
  b.avg_pool(p + "branch_pool.avg", 3, 1, 1, x);
  const int bp = conv_bn(b, p + "branch_pool", b.last(), 192, 1);
  return b.concat(p + "cat", {b1, b7, bd, bp});
}

int inception_d(ModelBuilder& b, const std::string& p, int x) {
  conv_bn(b, p + "branch3x3_1", x, 192, 1);
  const int b3 = conv_bn(b, p + "branch3x3_2", b.last(), 320, 3, 2);
  conv_bn(b, p + "branch7x7x3_1", x, 192, 1);
  add_basic_conv(b, p + "branch7x7x3_2.", b.last(), 192, 1, 7, 1, 0, 3);
  add_basic_conv(b, p + "branch7x7x3_3.", b.last(), 192, 7, 1, 1, 3, 0);
  const int b7 = conv_bn(b, p + "branch7x7x3_4", b.last(), 192, 3, 2);
  const int bp = b.max_pool(p + "branch_pool", 3, 2, 0, false, x);
  return b.concat(p + "cat", {b3, b7, bp});
}

int inception_e(ModelBuilder& b, const std::string& p, int x) {
  const int b1 = conv_bn(b, p + "branch1x1", x, 320, 1);
  const int r3 = conv_bn(b, p + "branch3x3_1", x, 384, 1);
  const int a = add_basic_conv(b, p + "branch3x3_2a.", r3, 384, 1, 3, 1, 0, 1);
  const int c = add_basic_conv(b, p + "branch3x3_2b.", r3, 384, 3, 1, 1, 1, 0);
  conv_bn(b, p + "branch3x3dbl_1", x, 448, 1);
  const int d = conv_bn(b, p + "branch3x3dbl_2", b.last(), 384, 3, 1, 1);
  const int da = add_basic_conv(b, p + "branch3x3dbl_3a.", d, 384, 1, 3, 1, 0, 1);
  const int db = add_basic_conv(b, p + "branch3x3dbl_3b.", d, 384, 3, 1, 1, 1, 0);
  b.avg_pool(p + "branch_pool.avg", 3, 1, 1, x);
  const int bp = conv_bn(b, p + "branch_pool", b.last(), 192, 1);
  const int b3 = b.concat(p + "branch3x3.cat", {a, c});  // torchvision's nested torch.cat
  const int bd = b.concat(p + "branch3x3dbl.cat", {da, db});
  return b.concat(p + "cat", {b1, b3, bd, bp});
}

}  // namespace

int add_basic_conv(ModelBuilder& b, const std::string& p, int from, std::int64_t out,
                   std::int64_t kernel_h, std::int64_t kernel_w, std::int64_t stride,
                   std::int64_t pad_h, std::int64_t pad_w) {
  b.conv(p + "conv", out, kernel_h, kernel_w, stride, stride, pad_h, pad_w, false, from);
  b.batch_norm(p + "bn");  // eps 0.001: no effect on cost
  return b.relu(p + "relu");
}

Model make_googlenet(bool aux) {
  ModelBuilder b(aux ? "googlenet_aux" : "googlenet", {false, 3, 224, 224, 0},
                 OptimizerKind::kSgdMomentum);
  conv_bn(b, "conv1", ModelBuilder::kInput, 64, 7, 2, 3);
  b.max_pool("maxpool1", 3, 2, 0, true);
  conv_bn(b, "conv2", b.last(), 64, 1);
  conv_bn(b, "conv3", b.last(), 192, 3, 1, 1);
  int x = b.max_pool("maxpool2", 3, 2, 0, true);
  x = inception_v1(b, "inception3a.", x, 64, 96, 128, 16, 32, 32);
  x = inception_v1(b, "inception3b.", x, 128, 128, 192, 32, 96, 64);
  x = b.max_pool("maxpool3", 3, 2, 0, true, x);
  x = inception_v1(b, "inception4a.", x, 192, 96, 208, 16, 48, 64);
  if (aux) googlenet_aux(b, "aux1.", x);
  x = inception_v1(b, "inception4b.", x, 160, 112, 224, 24, 64, 64);
  x = inception_v1(b, "inception4c.", x, 128, 128, 256, 24, 64, 64);
  x = inception_v1(b, "inception4d.", x, 112, 144, 288, 32, 64, 64);
  if (aux) googlenet_aux(b, "aux2.", x);
  x = inception_v1(b, "inception4e.", x, 256, 160, 320, 32, 128, 128);
  x = b.max_pool("maxpool4", 2, 2, 0, true, x);
  x = inception_v1(b, "inception5a.", x, 256, 160, 320, 32, 128, 128);
  x = inception_v1(b, "inception5b.", x, 384, 192, 384, 48, 128, 128);
  b.global_avg_pool("avgpool", x);
  b.flatten("flatten");
  b.dropout("dropout", 0.2);
  b.linear("fc", 1000);
  b.loss("loss");
  return std::move(b).build();
}

Model make_inception_v3(bool aux) {
  ModelBuilder b(aux ? "inception_v3" : "inception_v3_noaux", {false, 3, 299, 299, 0},
                 OptimizerKind::kSgdMomentum);
  conv_bn(b, "Conv2d_1a_3x3", ModelBuilder::kInput, 32, 3, 2);
  conv_bn(b, "Conv2d_2a_3x3", b.last(), 32, 3);
  conv_bn(b, "Conv2d_2b_3x3", b.last(), 64, 3, 1, 1);
  b.max_pool("maxpool1", 3, 2, 0);
  conv_bn(b, "Conv2d_3b_1x1", b.last(), 80, 1);
  conv_bn(b, "Conv2d_4a_3x3", b.last(), 192, 3);
  int x = b.max_pool("maxpool2", 3, 2, 0);
  x = inception_a(b, "Mixed_5b.", x, 32);
  x = inception_a(b, "Mixed_5c.", x, 64);
  x = inception_a(b, "Mixed_5d.", x, 64);
  x = inception_b(b, "Mixed_6a.", x);
  x = inception_c(b, "Mixed_6b.", x, 128);
  x = inception_c(b, "Mixed_6c.", x, 160);
  x = inception_c(b, "Mixed_6d.", x, 160);
  x = inception_c(b, "Mixed_6e.", x, 192);
  if (aux) {  // AuxLogits: avg pool 5/3, 1×1→128, 5×5→768, global pool, fc 768→1000
    b.avg_pool("AuxLogits.pool", 5, 3, 0, x);
    conv_bn(b, "AuxLogits.conv0", b.last(), 128, 1);
    conv_bn(b, "AuxLogits.conv1", b.last(), 768, 5);
    b.global_avg_pool("AuxLogits.avgpool");
    b.flatten("AuxLogits.flatten");
    b.linear("AuxLogits.fc", 1000);
    b.loss("AuxLogits.loss");
  }
  x = inception_d(b, "Mixed_7a.", x);
  x = inception_e(b, "Mixed_7b.", x);
  x = inception_e(b, "Mixed_7c.", x);
  b.global_avg_pool("avgpool", x);
  b.flatten("flatten");
  b.dropout("dropout", 0.5);
  b.linear("fc", 1000);
  b.loss("loss");
  return std::move(b).build();
}

}  // namespace scalecast::models
