// FLOPs per token of the LLM zoo against the published numbers that imply them: a source's
// utilisation and its throughput or iteration time together fix the FLOPs per token it counted.
// Korthikanti et al. Tables 3/5 and MegaScale Table 2 (MFU from iteration time, A100 312 TFLOP/s),
// NeMo 24.07 and Megatron-Bridge (model TFLOP/s per GPU / tokens per second per GPU), TorchTitan
// docs/performance.md (MFU from tokens per second): [Korthikanti-MLSys23], [MegaScale],
// [NeMo-24.07-perf], [Megatron-Bridge-perf], [TorchTitan-perf].
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "models/transformer.hpp"

using namespace scalecast::models;

namespace {

TransformerSpec zoo(const char* name) { return *find_transformer(name); }

constexpr double kA100 = 312e12;  // dense BF16/FP16 peak the sources divide by

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("Korthikanti et al. and MegaScale: MFU from iteration time (3 x forward, full s^2)") {
    struct Row {
      const char* model;
      double gbs, gpus, seconds, mfu_pct;
    };
    for (const Row& r :
         {Row{"gpt3_22b", 4, 8, 1.10, 41.5}, Row{"gpt3_175b", 64, 64, 13.75, 51.4},
          Row{"gpt3_530b", 280, 280, 37.83, 56.0}, Row{"gpt3_1t", 512, 512, 71.49, 56.3},
          Row{"megascale_175b", 768, 256, 40.0, 53.0}, Row{"megascale_175b", 768, 1024, 11.9, 44.7},
          Row{"megascale_175b", 6144, 3072, 29.02, 48.7}}) {
      const double per_token = model_flops_per_token(zoo(r.model), 2048, FlopConvention::kModel);
      const double mfu = r.gbs * 2048 * per_token / r.seconds / r.gpus / kA100 * 100;
      MESSAGE(fmt::format("{} on {}: published MFU {}%, ours {:.2f}%", r.model, r.gpus, r.mfu_pct,
                          mfu));
      // The sources print 3 digits and round the iteration time.
      CHECK(std::abs(mfu - r.mfu_pct) < 0.2);
    }
  }

  TEST_CASE("NeMo 24.07 counts full attention, Megatron-Bridge the causal half") {
    struct Row {
      const char* model;
      std::int64_t seq;
      double tokens_per_s, tflops;
      FlopConvention c;
    };
    for (const Row& r : {Row{"gpt3_175b", 2048, 726, 782, FlopConvention::kModel},
                         Row{"gpt3_20b", 2048, 5851, 750, FlopConvention::kModel},
                         Row{"llama2_70b", 4096, 1707, 759, FlopConvention::kModel},
                         Row{"llama3_70b", 8192, 1533, 738, FlopConvention::kModel},
                         Row{"nemotron4_340b", 4096, 322, 678, FlopConvention::kModel},
                         Row{"llama3_70b", 8192, 1619, 727, FlopConvention::kCausal},
                         Row{"llama3_70b", 8192, 1621, 728, FlopConvention::kCausal}}) {
      const double published = r.tflops * 1e12 / r.tokens_per_s;
      const double ours = model_flops_per_token(zoo(r.model), r.seq, r.c);
      MESSAGE(
          fmt::format("{}: published {:.4e} FLOP/token, ours {:.4e}", r.model, published, ours));
      CHECK(ours == doctest::Approx(published).epsilon(0.002));  // 3-digit figures
    }
    // The other convention misses by the attention half: 7 % for Llama 3 70B at 8,192.
    CHECK(model_flops_per_token(zoo("llama3_70b"), 8192, FlopConvention::kModel) / (727e12 / 1619) >
          1.07);
  }

  TEST_CASE("TorchTitan's MFU: 6 x all parameters (embedding included) + 12 l h s") {
    struct Row {
      const char* model;
      std::int64_t seq;
      double wps, mfu_pct;
    };
    for (const Row& r : {Row{"llama3_8b", 8192, 2904, 56.8}, Row{"llama3_8b", 8192, 2973, 58.2},
                         Row{"llama3_70b", 8192, 331, 51.7}, Row{"llama2_13b", 4096, 2162, 61.1},
                         Row{"llama2_70b", 4096, 355, 50.8}}) {
      const TransformerSpec m = zoo(r.model);
      const double mfu =
          r.wps * model_flops_per_token(m, r.seq, FlopConvention::kAllParams) / kA100 * 100;
      const double model =
          r.wps * model_flops_per_token(m, r.seq, FlopConvention::kModel) / kA100 * 100;
      MESSAGE(fmt::format("{}: published {}%, all-params convention {:.2f}%, model FLOPs {:.2f}%",
                          r.model, r.mfu_pct, mfu, model));
      CHECK(std::abs(mfu - r.mfu_pct) < 0.1);
    }
    // Llama 3 8B: the embedding's 6 x 525M FLOPs per token are 5 % of its model FLOPs.
    CHECK(2904 * model_flops_per_token(zoo("llama3_8b"), 8192, FlopConvention::kModel) / kA100 *
              100 <
          54.0);
  }
}
