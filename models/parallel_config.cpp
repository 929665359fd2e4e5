#include "models/parallel_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>

#include "common/config_node.hpp"

namespace scalecast::models {
namespace {

using common::ConfigNode;
using common::format_count;

// Micro-batches per pipeline and step (first_problem): 10,000 on 2 DGX H100 (pp 2) took 38 s.
constexpr std::int64_t kMaxMicroBatches = 4096;

// A product of parallel degrees as a GPU count: exact, or "more than 9,223,372,036,854,775,807"
// where 64 bits do not hold it (ParallelConfig::degree_product saturates).
std::string gpu_product(std::int64_t n) {
  return n == std::numeric_limits<std::int64_t>::max() ? "more than " + format_count(n)
                                                       : format_count(n);
}

// The fewest transformer blocks of any pipeline rank (over its chunks), and that rank.
std::pair<std::int64_t, int> fewest_rank_blocks(const TransformerSpec& m, const ParallelConfig& c) {
  std::vector<std::int64_t> blocks(static_cast<std::size_t>(c.pp), 0);
  for (const ChunkLayers& ch : chunk_layers(m, c))
    blocks[static_cast<std::size_t>(ch.pp_rank)] += ch.layers;
  const auto it = std::min_element(blocks.begin(), blocks.end());
  return {*it, static_cast<int>(it - blocks.begin())};
}

// One rule broken: the key it is reported at and the message.
struct Problem {
  std::string key;
  std::string message;
};

// Every rule parse_parallel and check_parallel enforce, in the order they are reported; the key
// names the `parallel:` entry the error points at.
std::optional<Problem> first_problem(const ParallelConfig& c, const TransformerSpec& m, int gpus) {
  const auto P = [](std::string key, std::string msg) {
    return std::optional<Problem>(Problem{std::move(key), std::move(msg)});
  };
  if (m.heads % c.tp != 0)
    return P("tp",
             fmt::format("{} does not divide the {} attention heads of {}", c.tp, m.heads, m.name));
  if (m.kv_heads % c.tp != 0)
    return P("tp", fmt::format("{} does not divide the {} KV heads of {} (GQA groups)", c.tp,
                               m.kv_heads, m.name));
  if (m.ffn % c.tp != 0)
    return P("tp", fmt::format("{} does not divide the FFN size {} of {}", c.tp, m.ffn, m.name));
  const std::int64_t chunks = static_cast<std::int64_t>(c.pp) * c.virtual_stages;
  if (c.virtual_stages > 1 && c.schedule != PipelineSchedule::kInterleaved1F1B)
    return P("virtual_stages", fmt::format("{} virtual stages need schedule: interleaved (got {})",
                                           c.virtual_stages, to_string(c.schedule)));
  if (c.schedule == PipelineSchedule::kInterleaved1F1B) {
    if (c.virtual_stages < 2)
      return P("virtual_stages",
               "the interleaved schedule needs virtual_stages of 2 or more (model chunks per "
               "pipeline rank)");
    if (c.pp < 2) return P("pp", "the interleaved schedule needs pp of 2 or more");
  }
  const bool uneven = c.first_stage_layers > 0 || c.last_stage_layers > 0;
  if (uneven) {
    if (c.pp < 2) return P("pp", "first_stage_layers / last_stage_layers need pp of 2 or more");
    if (c.virtual_stages != 1)
      return P("virtual_stages", "first_stage_layers / last_stage_layers need virtual_stages 1");
    const std::int64_t first = c.first_stage_layers > 0 ? c.first_stage_layers : -1;
    const std::int64_t last = c.last_stage_layers > 0 ? c.last_stage_layers : -1;
    // An unset end takes the middle stages' share: solve for it.
    const std::int64_t fixed = (first > 0 ? first : 0) + (last > 0 ? last : 0);
    const std::int64_t free_stages = c.pp - (first > 0) - (last > 0);
    const bool bad = free_stages == 0 ? fixed != m.layers
                                      : fixed >= m.layers || (m.layers - fixed) % free_stages != 0;
    if (bad)
      return P(c.first_stage_layers > 0 ? "first_stage_layers" : "last_stage_layers",
               fmt::format("the {} layers of {} minus {} on the first/last stage do not split "
                           "evenly over the other {} pipeline stages",
                           m.layers, m.name, fixed, free_stages));
  } else if (m.layers % chunks != 0) {
    return P(c.virtual_stages > 1 ? "virtual_stages" : "pp",
             c.virtual_stages > 1
                 ? fmt::format("pp {} x virtual_stages {} = {} does not divide the {} layers of {}",
                               c.pp, c.virtual_stages, chunks, m.layers, m.name)
                 : fmt::format("{} does not divide the {} layers of {} (set first_stage_layers / "
                               "last_stage_layers for an uneven split)",
                               c.pp, m.layers, m.name));
  }
  // A learned position table has a row per position up to the model's sequence length, as the
  // top-level seq_len is checked (scenarios/README.md); rotary positions have no table.
  if (const std::string why = position_table_problem(m, c.seq_len); !why.empty())
    return P("seq_len", why);
  if (c.cp > 1 && c.seq_len % (2 * c.cp) != 0)
    return P("cp", fmt::format("2 x cp = {} does not divide the sequence length {} (each rank "
                               "takes two chunks for causal load balancing)",
                               2 * c.cp, c.seq_len));
  // In 64 bits: the int product wrapped (tp 8 x cp 1025 x dp 1,047,553 = 2^33 + 8 passed as
  // the 8 GPUs of one node and failed inside the simulation).
  if (gpus > 0 && c.gpus() != gpus)
    return P("dp", fmt::format("tp {} x pp {} x cp {} x dp {} = {} GPUs, but the job has {}", c.tp,
                               c.pp, c.cp, c.dp, gpu_product(c.gpus()), format_count(gpus)));
  if (c.gpus() > std::numeric_limits<int>::max())
    return P("dp", fmt::format("tp {} x pp {} x cp {} x dp {} = {} GPUs; expected at most {}", c.tp,
                               c.pp, c.cp, c.dp, gpu_product(c.gpus()),
                               format_count(std::numeric_limits<int>::max())));
  if (c.global_batch % (c.dp * c.micro_batch) != 0)
    return P("global_batch",
             fmt::format("{} sequences do not split into micro-batches of {} over {} data-parallel "
                         "replicas (dp x micro_batch = {})",
                         format_count(c.global_batch), c.micro_batch, c.dp,
                         format_count(c.dp * c.micro_batch)));
  // Each micro-batch is simulated op by op on every stage: a million per step ran for minutes
  // and a billion ran out of memory. Published runs use tens to a few thousand (GPT-3 175B on
  // Megatron: 1,536 sequences over dp 8 = 192 per pipeline).
  if (c.micro_batches() > kMaxMicroBatches)
    return P("global_batch",
             fmt::format("{} sequences make {} micro-batches per pipeline (global_batch / (dp x "
                         "micro_batch)); expected at most {}",
                         format_count(c.global_batch), format_count(c.micro_batches()),
                         format_count(kMaxMicroBatches)));
  if (c.schedule == PipelineSchedule::kInterleaved1F1B && c.micro_batches() % c.pp != 0)
    return P("global_batch",
             fmt::format("the interleaved schedule needs the micro-batches per pipeline ({}) to be "
                         "a multiple of pp {}",
                         c.micro_batches(), c.pp));
  if (c.sequence_parallel && c.tp < 2)
    return P("sequence_parallel",
             "sequence parallelism shards over TP ranks: it needs tp of 2 or more");
  if (c.sequence_parallel && (c.seq_len / c.cp) % c.tp != 0)
    return P("sequence_parallel",
             fmt::format("tp {} does not divide the {} tokens per context-parallel rank", c.tp,
                         c.seq_len / c.cp));
  if (c.recompute_every < 1 || (c.recompute_every > 1 && c.recompute != Recompute::kFull))
    return P("recompute_every",
             fmt::format("expected 1, or k >= 2 with recompute: full (every k-th block "
                         "checkpointed), got {} with recompute: {}",
                         c.recompute_every, to_string(c.recompute)));
  // Every k-th block of a pipeline rank is checkpointed (TorchTitan counts the blocks of its
  // process's model chunks): a k above a rank's blocks checkpoints none there, so recompute
  // full with recompute_every 64 on Llama 3 8B's 32 blocks ran exactly as recompute none.
  if (c.recompute == Recompute::kFull && c.recompute_every > 1) {
    const auto [fewest, rank] = fewest_rank_blocks(m, c);
    if (c.recompute_every > fewest)
      return P(
          "recompute_every",
          fmt::format("expected at most {}, the transformer blocks of pipeline rank {} ({} "
                      "over pp {}{}): every k-th block of a rank is checkpointed, so a "
                      "larger k checkpoints none there, got {}",
                      fewest, rank, m.layers, c.pp,
                      c.virtual_stages > 1 ? fmt::format(" x virtual_stages {}", c.virtual_stages)
                                           : std::string(),
                      c.recompute_every));
  }
  if (c.grad_reduce_bytes != 2 && c.grad_reduce_bytes != 4)
    return P("grad_reduce_dtype",
             fmt::format("expected 2 (bf16/fp16) or 4 (fp32) bytes per gradient element, got {}",
                         c.grad_reduce_bytes));
  if (c.zero_stage < 0 || c.zero_stage > 3)
    return P("zero_stage", fmt::format("expected 0, 1, 2 or 3, got {}", c.zero_stage));
  return std::nullopt;
}

template <typename E>
E parse_enum(const ConfigNode& n, std::initializer_list<std::pair<std::string_view, E>> choices) {
  const std::string text = n.as_string();
  std::string list;
  for (const auto& [name, value] : choices) {
    if (text == name) return value;
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  n.fail(fmt::format("expected one of {}, got \"{}\"", list, text));
}

}  // namespace

std::string_view to_string(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kGPipe:
      return "gpipe";
    case PipelineSchedule::k1F1B:
      return "1f1b";
    case PipelineSchedule::kInterleaved1F1B:
      return "interleaved";
  }
  return "?";
}

std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
    case Recompute::kSelectiveOp:
      return "selective_op";
  }
  return "?";
}

std::string_view to_string(LlmPrecision p) {
  switch (p) {
    case LlmPrecision::kBf16:
      return "bf16";
    case LlmPrecision::kFp16:
      return "fp16";
    case LlmPrecision::kFp8:
      return "fp8";
  }
  return "?";
}

std::string_view to_string(ParallelDim d) {
  switch (d) {
    case ParallelDim::kTp:
      return "tp";
    case ParallelDim::kCp:
      return "cp";
    case ParallelDim::kDp:
      return "dp";
    case ParallelDim::kPp:
      return "pp";
  }
  return "?";
}

ParallelConfig parse_parallel(const ConfigNode& node, const TransformerSpec& model, int gpus) {
  if (!node.is_map()) node.fail("expected a map of parallel settings (tp, pp, dp, ...)");
  node.check_keys({"tp",
                   "pp",
                   "cp",
                   "dp",
                   "virtual_stages",
                   "micro_batch",
                   "global_batch",
                   "seq_len",
                   "schedule",
                   "sequence_parallel",
                   "recompute",
                   "zero_stage",
                   "precision",
                   "overlap",
                   "order",
                   "first_stage_layers",
                   "last_stage_layers",
                   "flash_attention",
                   "recompute_every",
                   "grad_reduce_dtype"});
  constexpr int kMax = 1 << 20;
  ParallelConfig c;
  bool dp_undivided = false;  // no `dp` and tp x pp x cp does not divide the GPUs
  c.tp = node.int_field_or("tp", 1, kMax, 1);
  c.pp = node.int_field_or("pp", 1, kMax, 1);
  c.cp = node.int_field_or("cp", 1, kMax, 1);
  c.virtual_stages = node.int_field_or("virtual_stages", 1, kMax, 1);
  c.micro_batch = node.has("micro_batch") ? node.required("micro_batch").as_int_in(1, kMax) : 1;
  c.global_batch = node.required("global_batch").as_int_in(1, std::int64_t{1} << 40);
  c.seq_len = node.has("seq_len") ? node.required("seq_len").as_int_in(1, std::int64_t{1} << 30)
                                  : model.seq_len;
  if (node.has("dp")) {
    c.dp = node.int_field_or("dp", 1, kMax, 1);
  } else {
    // 64 bits: tp 65536 x pp 65536 wrapped to 0 and `gpus % inner` stopped the process (SIGFPE).
    const std::int64_t inner = ParallelConfig::degree_product({c.tp, c.pp, c.cp});
    c.dp = gpus > 0 && gpus % inner == 0 ? static_cast<int>(gpus / inner) : 1;
    dp_undivided = gpus > 0 && gpus % inner != 0;
  }
  if (auto n = node.optional("schedule"))
    c.schedule =
        parse_enum<PipelineSchedule>(*n, {{"gpipe", PipelineSchedule::kGPipe},
                                          {"1f1b", PipelineSchedule::k1F1B},
                                          {"interleaved", PipelineSchedule::kInterleaved1F1B}});
  if (auto n = node.optional("recompute"))
    c.recompute = parse_enum<Recompute>(*n, {{"none", Recompute::kNone},
                                             {"selective", Recompute::kSelective},
                                             {"full", Recompute::kFull},
                                             {"selective_op", Recompute::kSelectiveOp}});
  if (auto n = node.optional("recompute_every")) {
    c.recompute_every = n->as_int_in(1, kMax);
    if (c.recompute_every > 1 && c.recompute != Recompute::kFull)
      n->fail("checkpoints every k-th block of full recomputation; expected `recompute: full`");
  }
  if (auto n = node.optional("grad_reduce_dtype"))
    c.grad_reduce_bytes = parse_enum<int>(*n, {{"fp32", 4}, {"bf16", 2}, {"fp16", 2}});
  if (auto n = node.optional("precision"))
    c.precision = parse_enum<LlmPrecision>(*n, {{"bf16", LlmPrecision::kBf16},
                                                {"fp16", LlmPrecision::kFp16},
                                                {"fp8", LlmPrecision::kFp8}});
  c.sequence_parallel = node.bool_or("sequence_parallel", false);
  c.flash_attention = node.bool_or("flash_attention", true);
  c.zero_stage = node.int_field_or("zero_stage", 0, 3, 0);
  if (auto n = node.optional("first_stage_layers")) c.first_stage_layers = n->as_int_in(1, kMax);
  if (auto n = node.optional("last_stage_layers")) c.last_stage_layers = n->as_int_in(1, kMax);
  if (auto o = node.optional("overlap")) {
    o->check_keys({"tp", "dp", "param_gather"});
    c.overlap_tp_comm = o->bool_or("tp", c.overlap_tp_comm);
    c.overlap_dp_comm = o->bool_or("dp", c.overlap_dp_comm);
    c.overlap_param_gather = o->bool_or("param_gather", c.overlap_param_gather);
  }
  if (auto o = node.optional("order")) {
    const auto items = o->is_sequence() ? o->items() : std::vector<ConfigNode>{};
    if (items.size() != 4)
      o->fail("expected the four dimensions innermost first, e.g. [tp, cp, dp, pp]");
    c.order.clear();
    for (const ConfigNode& it : items) {
      const ParallelDim d = parse_enum<ParallelDim>(it, {{"tp", ParallelDim::kTp},
                                                         {"cp", ParallelDim::kCp},
                                                         {"dp", ParallelDim::kDp},
                                                         {"pp", ParallelDim::kPp}});
      if (std::find(c.order.begin(), c.order.end(), d) != c.order.end())
        it.fail(fmt::format("'{}' appears twice", to_string(d)));
      c.order.push_back(d);
    }
  }
  if (dp_undivided) {
    // The model's own rules first (a TP that does not divide the heads says more), then this.
    const auto p = first_problem(c, model, 0);
    if (p && p->key != "global_batch" && p->key != "sequence_parallel" && p->key != "zero_stage" &&
        p->key != "dp")
      (node.has(p->key) ? node.required(p->key) : node).fail(p->message);
    const std::int64_t inner = ParallelConfig::degree_product({c.tp, c.pp, c.cp});
    node.fail(fmt::format("tp {} x pp {} x cp {} = {} {} the job's {} GPUs", c.tp, c.pp, c.cp,
                          gpu_product(inner), inner > gpus ? "is more than" : "does not divide",
                          format_count(gpus)));
  }
  if (auto p = first_problem(c, model, gpus)) {
    // Derived values (dp, seq_len) are reported at the map when their key is absent.
    (node.has(p->key) ? node.required(p->key) : node).fail(p->message);
  }
  return c;
}

void check_parallel(const ParallelConfig& config, const TransformerSpec& model, int gpus) {
  if (config.tp < 1 || config.pp < 1 || config.cp < 1 || config.dp < 1 ||
      config.virtual_stages < 1 || config.micro_batch < 1 || config.global_batch < 1 ||
      config.seq_len < 1)
    throw std::invalid_argument(
        "parallel: tp, pp, cp, dp, virtual_stages, micro_batch, global_batch and seq_len must be "
        "positive");
  if (auto p = first_problem(config, model, gpus))
    throw std::invalid_argument(fmt::format("parallel.{}: {}", p->key, p->message));
}

std::vector<ChunkLayers> chunk_layers(const TransformerSpec& model, const ParallelConfig& config) {
  const auto chunks =
      static_cast<int>(ParallelConfig::degree_product({config.pp, config.virtual_stages}));
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(chunks), model.layers / chunks);
  if (config.first_stage_layers > 0 || config.last_stage_layers > 0) {
    const std::int64_t fixed = config.first_stage_layers + config.last_stage_layers;
    const int free_stages =
        chunks - (config.first_stage_layers > 0) - (config.last_stage_layers > 0);
    const std::int64_t share = free_stages > 0 ? (model.layers - fixed) / free_stages : 0;
    std::fill(sizes.begin(), sizes.end(), share);
    if (config.first_stage_layers > 0) sizes.front() = config.first_stage_layers;
    if (config.last_stage_layers > 0) sizes.back() = config.last_stage_layers;
  }
  std::vector<ChunkLayers> out;
  std::int64_t first = 0;
  for (int c = 0; c < chunks; ++c) {
    ChunkLayers l;
    l.chunk = c;
    l.pp_rank = c % config.pp;
    l.first_layer = first;
    l.layers = sizes[static_cast<std::size_t>(c)];
    l.has_embedding = c == 0;
    l.has_output = c == chunks - 1;
    first += l.layers;
    out.push_back(l);
  }
  return out;
}

std::int64_t selective_op_recomputed_weights(const TransformerSpec& m) {
  const std::int64_t d = m.hidden, kv = m.kv_heads * m.head_dim(), q = m.heads * m.head_dim();
  return d * kv + q * d + d * m.ffn;
}

double training_flops_per_token(const TransformerSpec& model, const ParallelConfig& config,
                                bool hardware, bool causal_half) {
  const std::int64_t s = config.seq_len > 0 ? config.seq_len : model.seq_len;
  const FlopCount f = transformer_flops(model, s, causal_half);
  double per_seq = 3.0 * f.forward;
  if (hardware) {
    const double layers = static_cast<double>(model.layers);
    if (config.recompute == Recompute::kFull) {
      const double checkpointed =
          static_cast<double>(model.layers / std::max(1, config.recompute_every));
      per_seq += checkpointed * (f.layer_gemm + f.layer_attention);
    }
    if (config.recompute == Recompute::kSelective) per_seq += layers * f.layer_attention;
    if (config.recompute == Recompute::kSelectiveOp)
      per_seq += layers * 2.0 * static_cast<double>(s) *
                 static_cast<double>(selective_op_recomputed_weights(model));
  }
  return per_seq / static_cast<double>(s);
}

}  // namespace scalecast::models
