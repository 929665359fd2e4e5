#include "sim/framework_preset.hpp"

namespace scalecast::sim {

AllReduceConfig framework_bucketing(calibration::Framework f, AllReduceConfig c) {
  using calibration::Framework;
  switch (f) {
    case Framework::kPyTorch:
      // torch.nn.parallel.DistributedDataParallel: bucket_cap_mb=25 (bytes = 25 * 1024 * 1024),
      // first bucket dist._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB, buckets in reverse parameter
      // order, i.e. gradient ready order, each all-reduced as soon as its last gradient is ready
      // (torch/nn/parallel/distributed.py, torch/csrc/distributed/c10d/reducer.cpp).
      c.bucketing = Bucketing::kDdp;
      c.fusion_bytes = kDdpBucketCapBytes;
      c.first_bucket_bytes = kDdpFirstBucketBytes;
      c.cycle_time_s = 0.0;
      c.after_backward = false;
      break;
    case Framework::kTensorFlow:
      // The TensorFlow sources of the public set ran Horovod's DistributedOptimizer (NVIDIA
      // DeepLearningExamples ResNet-50 v1.5 in the 20.06-tf1 container, aws-samples
      // deep-learning-models, the Horovod README benchmark), all before Horovod v0.21: tensor
      // fusion up to 64 MiB at a 5 ms cycle. TensorFlow's own MirroredStrategy is
      // `bucketing: packs` (scenarios/README.md).
      c.bucketing = Bucketing::kFusion;
      c.fusion_bytes = kHorovodFusionBytes;
      c.cycle_time_s = kHorovodLegacyCycle_s;
      c.after_backward = false;
      break;
    case Framework::kMxnet:
      // NVIDIA's MLPerf MXNet ResNet (KVSTORE=horovod): MXNET_HOROVOD_NUM_GROUPS=1, one grouped
      // all-reduce of every gradient after the backward pass ("Default is no NCCL and BWD
      // overlap", mlcommons/training_results_v0.7 NVIDIA/benchmarks/resnet/implementations/
      // mxnet/config_DGXA100_multi_230x8x35.sh; the same in v3.0 config_DGXA100_common.sh),
      // HOROVOD_FUSION_THRESHOLD=67108864, HOROVOD_CYCLE_TIME=0.1 (ms). The 0.1 ms cycle is not
      // replayed as ticks: with every gradient handed over at once it delays the all-reduce by
      // at most 0.1 ms, and the engine's tick grid, phased with the step start, makes the step
      // time a sawtooth in the compute time that the anchor fit cannot converge on (12
      // simulations, residual 0.16% on H-8). `allreduce.cycle_time: 0.1ms` replays it.
      c.bucketing = Bucketing::kFusion;
      c.fusion_bytes = kHorovodFusionBytes;
      c.cycle_time_s = 0.0;
      c.after_backward = true;
      break;
    case Framework::kNone:
      break;
  }
  return c;
}

}  // namespace scalecast::sim
