// parse_parallel(): every rule of models/parallel_config.hpp is a ConfigError at the offending
// key, file:line:col; chunk_layers() is Megatron's split (interleaved chunk c on rank c % pp).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <limits>

#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "models/parallel_config.hpp"

using namespace scalecast::models;
using scalecast::common::ConfigError;
using scalecast::common::ConfigNode;

namespace {

TransformerSpec zoo(const char* name) { return *find_transformer(name); }

ParallelConfig parse(const std::string& yaml, const char* model, int gpus) {
  const ConfigNode root = ConfigNode::load_string(yaml, "s.yaml");
  return parse_parallel(root.required("parallel"), zoo(model), gpus);
}

std::string error_of(const std::string& yaml, const char* model, int gpus) {
  try {
    parse(yaml, model, gpus);
  } catch (const ConfigError& e) {
    MESSAGE(std::string(e.what()));
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("a full parallel map parses") {
    const ParallelConfig c = parse(
        "parallel:\n  tp: 8\n  pp: 8\n  virtual_stages: 3\n  schedule: interleaved\n"
        "  micro_batch: 1\n  global_batch: 1536\n  sequence_parallel: true\n"
        "  recompute: selective\n  zero_stage: 1\n  precision: fp8\n"
        "  overlap: {tp: true, dp: false, param_gather: false}\n  order: [tp, dp, cp, pp]\n",
        "gpt3_175b", 1024);
    CHECK(c.dp == 16);  // derived: 1024 / (8 x 8)
    CHECK(c.seq_len == 2048);
    CHECK(c.micro_batches() == 96);
    CHECK(c.schedule == PipelineSchedule::kInterleaved1F1B);
    CHECK(c.recompute == Recompute::kSelective);
    CHECK(c.precision == LlmPrecision::kFp8);
    CHECK(c.overlap_tp_comm);
    CHECK_FALSE(c.overlap_dp_comm);
    CHECK(c.order == std::vector<ParallelDim>{ParallelDim::kTp, ParallelDim::kDp, ParallelDim::kCp,
                                              ParallelDim::kPp});
    CHECK(c.gpus() == 1024);
  }

  TEST_CASE("bad parallel configurations are file:line errors at the key") {
    CHECK(error_of("parallel:\n  tp: 3\n  global_batch: 8\n", "llama3_8b", 3)
              .find("s.yaml:2:7: error: parallel.tp: 3 does not divide the 32 attention heads of "
                    "llama3_8b") == 0);
    // Each micro-batch is simulated op by op: a billion sequences ran out of memory (CLI
    // fuzzing, 6 Dec); 4,096 micro-batches per pipeline is the limit.
    CHECK(error_of("parallel: {tp: 8, global_batch: 1000000000}\n", "llama3_8b", 8)
              .find("parallel.global_batch: 1,000,000,000 sequences make 1,000,000,000 "
                    "micro-batches per pipeline (global_batch / (dp x micro_batch)); expected at "
                    "most 4,096") != std::string::npos);
    CHECK(error_of("parallel: {tp: 8, global_batch: 4096}\n", "llama3_8b", 8) == "(no error)");
    // Llama 3 70B: 64 heads but 8 KV heads.
    CHECK(error_of("parallel: {tp: 16, global_batch: 16}\n", "llama3_70b", 16)
              .find("parallel.tp: 16 does not divide the 8 KV heads of llama3_70b") !=
          std::string::npos);
    CHECK(error_of("parallel:\n  pp: 5\n  global_batch: 8\n", "llama3_8b", 5)
              .find("s.yaml:2:7: error: parallel.pp: 5 does not divide the 32 layers of "
                    "llama3_8b") == 0);
    CHECK(error_of("parallel: {pp: 4, virtual_stages: 3, schedule: interleaved, global_batch: 8}\n",
                   "llama3_8b", 4)
              .find("parallel.virtual_stages: pp 4 x virtual_stages 3 = 12 does not divide the 32 "
                    "layers") != std::string::npos);
    CHECK(error_of("parallel:\n  tp: 8\n  dp: 3\n  global_batch: 24\n", "llama3_8b", 32)
              .find("s.yaml:3:7: error: parallel.dp: tp 8 x pp 1 x cp 1 x dp 3 = 24 GPUs, but the "
                    "job has 32") == 0);
    // Without dp, a TP that does not divide the heads is reported as such, not as a GPU count.
    CHECK(error_of("parallel: {tp: 3, global_batch: 8}\n", "llama3_70b", 64)
              .find("s.yaml:1:16: error: parallel.tp: 3 does not divide the 64 attention heads") ==
          0);
    CHECK(error_of("parallel:\n  tp: 8\n  pp: 3\n  global_batch: 24\n", "gpt3_1p7b", 64)
              .find("parallel: tp 8 x pp 3 x cp 1 = 24 does not divide the job's 64 GPUs") !=
          std::string::npos);
    CHECK(error_of("parallel:\n  tp: 8\n  micro_batch: 2\n  global_batch: 100\n", "llama3_8b", 64)
              .find("s.yaml:4:17: error: parallel.global_batch: 100 sequences do not split into "
                    "micro-batches of 2 over 8 data-parallel replicas") == 0);
    CHECK(error_of("parallel: {pp: 4, schedule: interleaved, global_batch: 8}\n", "llama3_8b", 4)
              .find("parallel: the interleaved schedule needs virtual_stages of 2 or more") !=
          std::string::npos);
    CHECK(
        error_of("parallel: {pp: 4, virtual_stages: 1, schedule: interleaved, global_batch: 8}\n",
                 "llama3_8b", 4)
            .find("parallel.virtual_stages: the interleaved schedule needs virtual_stages of 2") !=
        std::string::npos);
    CHECK(error_of("parallel: {pp: 4, virtual_stages: 2, global_batch: 8}\n", "llama3_8b", 4)
              .find("parallel.virtual_stages: 2 virtual stages need schedule: interleaved") !=
          std::string::npos);
    CHECK(error_of("parallel: {pp: 4, virtual_stages: 2, schedule: interleaved, global_batch: 6}\n",
                   "llama3_8b", 4)
              .find("parallel.global_batch: the interleaved schedule needs the micro-batches per "
                    "pipeline (6) to be a multiple of pp 4") != std::string::npos);
    CHECK(error_of("parallel:\n  zero_stage: 4\n  global_batch: 8\n", "llama3_8b", 8)
              .find("s.yaml:2:15: error: parallel.zero_stage: expected at most 3 (a whole number "
                    "from 0 to 3), got 4") == 0);
    CHECK(
        error_of("parallel: {schedule: zigzag, global_batch: 8}\n", "llama3_8b", 8)
            .find("parallel.schedule: expected one of gpipe, 1f1b, interleaved, got \"zigzag\"") !=
        std::string::npos);
    CHECK(error_of("parallel: {recompute: some, global_batch: 8}\n", "llama3_8b", 8)
              .find("parallel.recompute: expected one of none, selective, full") !=
          std::string::npos);
    CHECK(error_of("parallel: {precision: fp4, global_batch: 8}\n", "llama3_8b", 8)
              .find("parallel.precision: expected one of bf16, fp16, fp8") != std::string::npos);
    CHECK(error_of("parallel: {cp: 3, global_batch: 8}\n", "llama3_8b", 3)
              .find("parallel.cp: 2 x cp = 6 does not divide the sequence length 8192") !=
          std::string::npos);
    CHECK(error_of("parallel: {sequence_parallel: true, global_batch: 8}\n", "llama3_8b", 8)
              .find("parallel.sequence_parallel: sequence parallelism shards over TP ranks") !=
          std::string::npos);
    CHECK(error_of("parallel: {tp: 2, global_batch: 8, pipeline: 2}\n", "llama3_8b", 8)
              .find("parallel.pipeline") != std::string::npos);
    CHECK(error_of("parallel: {order: [tp, dp, tp, pp], global_batch: 8}\n", "llama3_8b", 8)
              .find("'tp' appears twice") != std::string::npos);
    CHECK(error_of("parallel: {order: [tp, dp], global_batch: 8}\n", "llama3_8b", 8)
              .find("parallel.order: expected the four dimensions") != std::string::npos);
    CHECK(error_of("parallel: {tp: 0, global_batch: 8}\n", "llama3_8b", 8)
              .find("parallel.tp: expected at least 1") != std::string::npos);
    CHECK(error_of("parallel: {tp: 2}\n", "llama3_8b", 2).find("global_batch") !=
          std::string::npos);
    CHECK(error_of("parallel: {pp: 16, first_stage_layers: 7, global_batch: 16}\n", "llama31_405b",
                   16)
              .find("parallel.first_stage_layers: the 126 layers of llama31_405b minus 7") !=
          std::string::npos);
  }

  TEST_CASE("parallel.seq_len is at most a learned position table, as the top-level seq_len is") {
    // gpt3_1p7b learns 2048 positions: 8192 and 2049 were accepted and simulated.
    const std::string base = "parallel:\n  tp: 1\n  global_batch: 8\n  seq_len: ";
    CHECK(error_of(base + "8192\n", "gpt3_1p7b", 1) ==
          "s.yaml:4:12: error: parallel.seq_len: expected at most 2048 tokens, the learned "
          "position table of gpt3_1p7b (a model with rotary positions has no such limit), got "
          "8192");
    CHECK(error_of(base + "2049\n", "gpt3_1p7b", 1)
              .find("parallel.seq_len: expected at most "
                    "2048 tokens") != std::string::npos);
    CHECK(parse(base + "2048\n", "gpt3_1p7b", 1).seq_len == 2048);
    // Rotary positions have no table: Llama 3 8B (8192 by default) takes a longer sequence.
    CHECK(parse(base + "16384\n", "llama3_8b", 1).seq_len == 16384);
    ParallelConfig c;
    c.seq_len = 4096;
    c.global_batch = 8;
    CHECK_THROWS_WITH_AS(check_parallel(c, zoo("gpt3_1p7b"), 1),
                         "parallel.seq_len: expected at most 2048 tokens, the learned position "
                         "table of gpt3_1p7b (a model with rotary positions has no such limit), "
                         "got 4096",
                         std::invalid_argument);
  }

  TEST_CASE("check_parallel: the same rules for a config built in code") {
    ParallelConfig c;
    c.tp = 3;
    c.seq_len = 8192;
    c.global_batch = 8;
    CHECK_THROWS_WITH_AS(check_parallel(c, zoo("llama3_8b"), 3),
                         "parallel.tp: 3 does not divide the 32 attention heads of llama3_8b",
                         std::invalid_argument);
    c.tp = 8;
    CHECK_NOTHROW(check_parallel(c, zoo("llama3_8b"), 8));
  }

  TEST_CASE("chunk_layers: Megatron's even and interleaved splits") {
    const TransformerSpec m = zoo("gpt3_175b");
    ParallelConfig c;
    c.pp = 8;
    c.virtual_stages = 3;
    c.schedule = PipelineSchedule::kInterleaved1F1B;
    const auto chunks = chunk_layers(m, c);
    REQUIRE(chunks.size() == 24);
    for (const ChunkLayers& ch : chunks) {
      CHECK(ch.layers == 4);
      CHECK(ch.first_layer == 4 * ch.chunk);
      CHECK(ch.pp_rank == ch.chunk % 8);
      CHECK(ch.has_embedding == (ch.chunk == 0));
      CHECK(ch.has_output == (ch.chunk == 23));
    }
    CHECK(chunks[9].pp_rank == 1);  // rank 1 runs chunks 1, 9, 17: layers 4-7, 36-39, 68-71
    CHECK(chunks[17].first_layer == 68);
  }

  TEST_CASE("uneven first/last stages: Llama 3.1 405B on 16 stages") {
    // Llama 3 paper (sec. 3.3.2): one layer fewer on the first and the last stage; 126 = 7 + 14 x 8
    // + 7.
    const ParallelConfig c = parse(
        "parallel: {tp: 8, pp: 16, first_stage_layers: 7, last_stage_layers: 7, "
        "global_batch: 2048}\n",
        "llama31_405b", 16384);
    CHECK(c.dp == 128);
    const auto chunks = chunk_layers(zoo("llama31_405b"), c);
    REQUIRE(chunks.size() == 16);
    CHECK(chunks[0].layers == 7);
    CHECK(chunks[1].layers == 8);
    CHECK(chunks[15].layers == 7);
    CHECK(chunks[15].first_layer == 119);
    // Without the uneven split, 16 does not divide 126.
    CHECK(error_of("parallel: {tp: 8, pp: 16, global_batch: 2048}\n", "llama31_405b", 16384)
              .find("parallel.pp: 16 does not divide the 126 layers of llama31_405b") !=
          std::string::npos);
  }

  TEST_CASE("training FLOPs per token: model vs hardware by recompute policy") {
    const TransformerSpec m = zoo("gpt3_175b");
    ParallelConfig c;
    c.seq_len = 2048;
    const FlopCount f = transformer_flops(m, 2048);
    const double per = 1.0 / 2048;
    CHECK(training_flops_per_token(m, c, false) == doctest::Approx(3 * f.forward * per));
    CHECK(training_flops_per_token(m, c, true) == doctest::Approx(3 * f.forward * per));
    c.recompute = Recompute::kFull;
    CHECK(training_flops_per_token(m, c, true) ==
          doctest::Approx((4 * f.forward - f.logits) * per));
    c.recompute = Recompute::kSelective;
    CHECK(training_flops_per_token(m, c, true) ==
          doctest::Approx((3 * f.forward + 96 * f.layer_attention) * per));
  }

  // Hostile inputs (LLM path): degrees whose int product wrapped, a recompute_every that
  // checkpoints nothing, a sequence beyond a learned position table.
  TEST_CASE("llm hostile: degree products are 64-bit, never wrapped") {
    // tp x pp wrapped to 0 and `gpus % inner` stopped the process with SIGFPE.
    const std::string huge =
        error_of("parallel: {tp: 65536, pp: 65536, global_batch: 16}\n", "llama3_8b", 8);
    CHECK(huge.find("s.yaml:1:16: error: parallel.tp: 65536 does not divide") == 0);
    // With the model's rules passed, the product itself (no dp: at the map).
    TransformerSpec deep = zoo("llama3_8b");
    deep.layers = 65536;
    deep.heads = deep.kv_heads = 1;
    deep.ffn = 8;
    const ConfigNode root = ConfigNode::load_string(
        "parallel: {pp: 65536, cp: 65536, seq_len: 131072, global_batch: 16}\n", "s.yaml");
    try {
      parse_parallel(root.required("parallel"), deep, 8);
      FAIL("no error");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()) ==
            "s.yaml:1:11: error: parallel: tp 1 x pp 65536 x cp 65536 = 4,294,967,296 is more "
            "than the job's 8 GPUs");
    }
    // 8 x 1025 x 1,047,553 = 2^33 + 8 wrapped to the job's 8 GPUs.
    CHECK(error_of("parallel: {tp: 8, cp: 1025, dp: 1047553, seq_len: 8200, "
                   "global_batch: 1047553}\n",
                   "llama3_8b", 8) ==
          "s.yaml:1:33: error: parallel.dp: tp 8 x pp 1 x cp 1025 x dp 1047553 = 8,589,934,600 "
          "GPUs, but the job has 8");
    CHECK(error_of("parallel: {cp: 1048575, dp: 4097, seq_len: 2097150, global_batch: 4097}\n",
                   "llama3_8b", 8)
              .find("= 4,296,011,775 GPUs, but the job has 8") != std::string::npos);
    ParallelConfig c;
    c.tp = c.pp = c.cp = c.dp = 1 << 20;  // 2^80: saturated, not wrapped
    CHECK(c.gpus() == std::numeric_limits<std::int64_t>::max());
    c.tp = 8;
    c.pp = 1;
    c.cp = 1025;
    c.dp = 1047553;
    CHECK(c.gpus() == 8589934600);
  }

  TEST_CASE("llm hostile: recompute_every at most the blocks of a pipeline rank") {
    // k above a rank's blocks checkpointed none: byte-identical to recompute none.
    for (const char* k : {"64", "1048576", "33"})
      CHECK(error_of(fmt::format("parallel: {{tp: 8, global_batch: 16, recompute: full, "
                                 "recompute_every: {}}}\n",
                                 k),
                     "llama3_8b", 8)
                .find("parallel.recompute_every: expected at most 32, the transformer blocks of "
                      "pipeline rank 0") != std::string::npos);
    CHECK(error_of("parallel: {tp: 2, pp: 4, global_batch: 16, recompute: full, "
                   "recompute_every: 9}\n",
                   "llama3_8b", 8)
              .find("expected at most 8, the transformer blocks of pipeline rank 0 (32 over pp "
                    "4)") != std::string::npos);
    CHECK(parse("parallel: {tp: 8, global_batch: 16, recompute: full, recompute_every: 32}\n",
                "llama3_8b", 8)
              .recompute_every == 32);
    CHECK(parse("parallel: {tp: 2, pp: 4, global_batch: 16, recompute: full, "
                "recompute_every: 8}\n",
                "llama3_8b", 8)
              .recompute_every == 8);
  }

  TEST_CASE("llm hostile: a sequence beyond a learned position table, one message") {
    // GPT-3: learned positions, a 2,048 context (Brown et al. 2020).
    const TransformerSpec g = zoo("gpt3_175b");
    CHECK(g.position == PositionKind::kLearned);
    CHECK(position_table_problem(g, 2048).empty());
    CHECK(position_table_problem(g, 4096) ==
          "expected at most 2048 tokens, the learned position table of gpt3_175b (a model with "
          "rotary positions has no such limit), got 4096");
    CHECK(position_table_problem(zoo("llama3_8b"), 1 << 30).empty());
    CHECK(error_of("parallel: {tp: 8, global_batch: 16, seq_len: 2049}\n", "gpt3_1p7b", 8)
              .find("parallel.seq_len: expected at most 2048 tokens") != std::string::npos);
  }
}
