#include "sim/llm_outputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "common/atomic_file.hpp"
#include "sim/trace_writer.hpp"

namespace scalecast::sim {

using nlohmann::ordered_json;

namespace {

ordered_json breakdown_json(const StageBreakdown& b) {
  return {{"compute_s", b.compute_s},       {"optimizer_s", b.optimizer_s},
          {"bubble_s", b.bubble_s},         {"exposed_tp_s", b.exposed_tp_s},
          {"exposed_cp_s", b.exposed_cp_s}, {"exposed_pp_s", b.exposed_pp_s},
          {"exposed_dp_s", b.exposed_dp_s}};
}

const char* kTracks[] = {"compute", "tp", "cp", "pp_wait", "dp"};

int track_index(const std::string& t) {
  for (int i = 0; i < 5; ++i)
    if (t == kTracks[i]) return i;
  return 5;
}

}  // namespace

ordered_json llm_point_json(const Scenario& scenario, const LlmPointResult& r) {
  const models::ParallelConfig& p = r.parallel;
  const PipelineResult& pr = r.pipeline;
  ordered_json j;
  j["nodes"] = r.nodes;
  j["gpus"] = r.gpus;
  j["gpus_per_node"] = r.gpus_per_node;
  j["model"] = r.model;
  ordered_json order = ordered_json::array();
  for (models::ParallelDim d : p.order) order.push_back(std::string(models::to_string(d)));
  j["parallel"] = {{"tp", p.tp},
                   {"pp", p.pp},
                   {"cp", p.cp},
                   {"dp", p.dp},
                   {"virtual_stages", p.virtual_stages},
                   {"schedule", std::string(models::to_string(p.schedule))},
                   {"micro_batch", p.micro_batch},
                   {"global_batch", p.global_batch},
                   {"micro_batches", p.micro_batches()},
                   {"seq_len", r.seq_len},
                   {"sequence_parallel", p.sequence_parallel},
                   {"recompute", std::string(models::to_string(p.recompute))},
                   {"recompute_every", p.recompute_every},
                   {"zero_stage", p.zero_stage},
                   {"precision", std::string(models::to_string(p.precision))},
                   {"overlap",
                    {{"tp", p.overlap_tp_comm},
                     {"dp", p.overlap_dp_comm},
                     {"param_gather", p.overlap_param_gather}}},
                   {"grad_reduce_bytes", p.grad_reduce_bytes},
                   {"order", order}};
  j["iteration_time_s"] = pr.iteration_time_s;
  j["tokens_per_iteration"] = r.tokens_per_iteration;
  j["throughput_tokens_per_s"] = r.tokens_per_s();
  j["tokens_per_s_per_gpu"] = r.tokens_per_s() / r.gpus;
  j["throughput_samples_per_s"] = static_cast<double>(p.global_batch) / pr.iteration_time_s;
  j["mfu"] = r.mfu();
  j["hfu"] = r.hfu();
  j["flops"] = {
      {"model_per_iteration", r.model_flops}, {"hardware_per_iteration", r.hardware_flops},
      {"peak_per_gpu", r.peak_flops_per_gpu}, {"peak_basis", r.peak_basis},
      {"mfu_formula", kMfuFormula},           {"hfu_formula", kHfuFormula}};
  const int b = r.bottleneck_stage;
  j["breakdown"] = breakdown_json(pr.stages[static_cast<std::size_t>(b)]);
  j["breakdown_stage"] = b;
  j["bottleneck_stage"] = {{"stage", b},
                           {"gpu", r.stage_gpu[static_cast<std::size_t>(b)]},
                           {"busy_s", pr.stages[static_cast<std::size_t>(b)].compute_s +
                                          pr.stages[static_cast<std::size_t>(b)].optimizer_s}};
  ordered_json stages = ordered_json::array();
  for (std::size_t st = 0; st < pr.stages.size(); ++st) {
    ordered_json e;
    e["stage"] = static_cast<int>(st);
    e["gpu"] = r.stage_gpu[st];
    e["breakdown"] = breakdown_json(pr.stages[st]);
    if (st < r.memory.size()) {
      const models::StageMemory& m = r.memory[st];
      e["memory"] = {
          {"weights_bytes", m.weights_bytes},        {"gradients_bytes", m.gradients_bytes},
          {"optimizer_bytes", m.optimizer_bytes},    {"activations_bytes", m.activations_bytes},
          {"workspace_bytes", m.workspace_bytes},    {"total_bytes", m.total_bytes()},
          {"device_bytes", r.stage_device_bytes[st]}};
    }
    stages.push_back(e);
  }
  j["stages"] = stages;
  ordered_json bytes;
  for (const auto& [k, v] : pr.bytes_per_iteration) bytes[k] = v;
  j["bytes_per_iteration"] = bytes;
  j["dp_flow_factor"] = r.dp_flow_factor;
  // Over TCP only (the platform's NICs without RDMA): absent, the native links.
  if (scenario.allreduce.transport == Transport::kTcp) j["transport"] = "tcp";
  j["cost_tiers"] = r.tiers;
  j["iterations"] = static_cast<int>(pr.iteration_times_s.size());
  j["fidelity"] = "wave";
  const Variability v{scenario.compute_noise_cv, scenario.straggler_fraction,
                      scenario.straggler_slowdown, scenario.seed};
  if (v.varied()) {
    const auto [lo, hi] =
        std::minmax_element(pr.iteration_times_s.begin(), pr.iteration_times_s.end());
    j["variability"] = {{"seed", v.seed},
                        {"compute_noise", v.compute_noise_cv},
                        {"stragglers", v.straggler_fraction},
                        {"straggler_slowdown", v.straggler_slowdown},
                        {"straggler_ranks", pr.stragglers},
                        {"replicas_simulated", pr.replicas_simulated},
                        {"iteration_time_min_s", *lo},
                        {"iteration_time_max_s", *hi}};
  }
  return j;
}

void write_llm_chrome_trace(std::ostream& o, const LlmPointResult& r) {
  TraceWriter trace(o);  // event by event (sim/trace_writer.hpp says why)
  std::map<int, bool> stage_seen;
  std::map<int, bool> thread_seen;
  for (const StageInterval& iv : r.pipeline.intervals) {
    const int t = track_index(iv.track);
    if (!stage_seen[iv.stage]) {
      stage_seen[iv.stage] = true;
      trace.emit({{"name", "process_name"},
                  {"ph", "M"},
                  {"pid", iv.stage},
                  {"tid", 0},
                  {"args",
                   {{"name", fmt::format("stage{:03d} ({})", iv.stage,
                                         r.stage_gpu[static_cast<std::size_t>(iv.stage)])}}}});
    }
    if (!thread_seen[iv.stage * 8 + t]) {
      thread_seen[iv.stage * 8 + t] = true;
      trace.emit({{"name", "thread_name"},
                  {"ph", "M"},
                  {"pid", iv.stage},
                  {"tid", t},
                  {"args", {{"name", iv.track}}}});
    }
    trace.emit({{"name", iv.name},
                {"cat", iv.track},
                {"ph", "X"},
                {"pid", iv.stage},
                {"tid", t},
                {"ts", iv.start_s * 1e6},
                {"dur", (iv.end_s - iv.start_s) * 1e6},
                {"args", {{"iteration", iv.iteration}}}});
  }
}

std::string llm_chrome_trace(const LlmPointResult& r) {
  std::ostringstream o;
  write_llm_chrome_trace(o, r);
  return o.str();
}

void write_llm_point_files(const std::string& dir, const LlmPointResult& r) {
  common::write_file_atomic(dir + "/iterations.csv", [&](std::ostream& o) {
    o << "iteration,time_s\n";
    int i = 0;
    for (double t : r.pipeline.iteration_times_s)
      o << i++ << ',' << fmt::format("{:.9g}", t) << '\n';
  });
  common::write_file_atomic(dir + "/trace.json",
                            [&](std::ostream& o) { write_llm_chrome_trace(o, r); });
}

std::string format_llm_table(const Scenario& s, const std::vector<ordered_json>& points) {
  std::ostringstream o;
  for (const ordered_json& p : points) {
    const auto& par = p["parallel"];
    o << fmt::format(
        "{} — {} on {}: TP {} PP {} CP {} DP {} ({}, v {}), {} micro-batches of {} x "
        "{} tokens, {}\n",
        s.name, p["model"].get<std::string>(), s.platform, par["tp"].get<int>(),
        par["pp"].get<int>(), par["cp"].get<int>(), par["dp"].get<int>(),
        par["schedule"].get<std::string>(), par["virtual_stages"].get<int>(),
        par["micro_batches"].get<std::int64_t>(), par["micro_batch"].get<std::int64_t>(),
        par["seq_len"].get<std::int64_t>(), par["precision"].get<std::string>());
    o << fmt::format(
        "{:>7} {:>10} {:>13} {:>10} {:>6} {:>6} {:>10} {:>10} {:>8} {:>8} {:>8} "
        "{:>8} {:>8}\n",
        "gpus", "iter_ms", "tokens/s", "tok/s/gpu", "mfu", "hfu", "compute_ms", "bubble_ms",
        "tp_ms", "pp_ms", "dp_ms", "cp_ms", "opt_ms");
    const auto& b = p["breakdown"];
    o << fmt::format(
        "{:>7} {:>10.2f} {:>13.0f} {:>10.1f} {:>5.1f}% {:>5.1f}% {:>10.2f} {:>10.2f} {:>8.2f} "
        "{:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f}\n",
        p["gpus"].get<int>(), 1e3 * p["iteration_time_s"].get<double>(),
        p["throughput_tokens_per_s"].get<double>(), p["tokens_per_s_per_gpu"].get<double>(),
        100.0 * p["mfu"].get<double>(), 100.0 * p["hfu"].get<double>(),
        1e3 * b["compute_s"].get<double>(), 1e3 * b["bubble_s"].get<double>(),
        1e3 * b["exposed_tp_s"].get<double>(), 1e3 * b["exposed_pp_s"].get<double>(),
        1e3 * b["exposed_dp_s"].get<double>(), 1e3 * b["exposed_cp_s"].get<double>(),
        1e3 * b["optimizer_s"].get<double>());
    o << fmt::format("bottleneck: stage {} on {} (breakdown above is that stage's)\n",
                     p["bottleneck_stage"]["stage"].get<int>(),
                     p["bottleneck_stage"]["gpu"].get<std::string>());
  }
  return o.str();
}

}  // namespace scalecast::sim
