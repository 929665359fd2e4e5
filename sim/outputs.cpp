#include "sim/outputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/input_file.hpp"
#include "common/version.hpp"
#include "sim/scenario_runner.hpp"
#include "sim/simgrid_info.hpp"
#include "sim/trace_writer.hpp"

namespace scalecast::sim {

using nlohmann::ordered_json;

nlohmann::ordered_json point_json(const Scenario& scenario, const JobResult& r) {
  ordered_json j;
  j["nodes"] = r.nodes;
  j["gpus"] = r.gpus;
  j["gpus_per_node"] = r.gpus_per_node;
  j["batch_per_gpu"] = r.batch_per_gpu;  // samples per GPU per iteration (optimizer step)
  // With gradient accumulation (absent otherwise, so other summaries keep their bytes).
  if (scenario.accumulation > 1) {
    j["micro_batch_per_gpu"] = scenario.batch_per_gpu;
    j["accumulation"] = scenario.accumulation;
  }
  j["iteration_time_s"] = r.iteration_time_s;
  j["throughput_samples_per_s"] = r.throughput_samples_per_s;
  j["scaling_efficiency"] = {{"vs_1_gpu", nullptr}, {"vs_1_node", nullptr}};
  j["breakdown"] = {{"compute_s", r.breakdown.compute_s},
                    {"exposed_comm_s", r.breakdown.exposed_comm_s},
                    {"io_stall_s", r.breakdown.io_stall_s},
                    {"copy_s", r.breakdown.copy_s},
                    {"idle_s", r.breakdown.idle_s}};
  // A scenario with a framework or fixed costs reports them (absent otherwise, so older
  // scenarios' summaries keep their bytes).
  const bool fixed_terms = scenario.framework != calibration::Framework::kNone ||
                           scenario.fixed_costs.dispatch_per_op_s > 0.0 ||
                           scenario.fixed_costs.per_iteration_s > 0.0;
  if (fixed_terms) {
    j["breakdown"]["fixed_s"] = r.breakdown.fixed_s;
    j["framework"] = std::string(calibration::to_string(scenario.framework));
    j["fixed_costs"] = {{"dispatch_per_op_s", scenario.fixed_costs.dispatch_per_op_s},
                        {"per_iteration_s", scenario.fixed_costs.per_iteration_s}};
    const AllReduceConfig& a = scenario.allreduce;
    j["bucketing"] = {{"rule", std::string(to_string(a.bucketing))},
                      {"fusion_bytes", a.fusion_bytes},
                      {"first_bucket_bytes", a.first_bucket_bytes},
                      {"packs", a.packs},
                      {"cycle_time_s", a.cycle_time_s},
                      {"after_backward", a.after_backward}};
    // With a cycle: where its ticks fell against each step (absent without one, so the
    // summaries of static buckets keep their bytes).
    if (a.cycle_time_s > 0.0) {
      if (a.cycle_phase)
        j["bucketing"]["cycle_phase"] = *a.cycle_phase;
      else
        j["bucketing"]["cycle_phase"] = "stratified";
    }
  }
  j["comm_total_s"] = r.comm_total_s;
  j["gpu_utilization"] = r.gpu_utilization;
  j["buckets_per_iteration"] = r.buckets_per_iteration;
  ordered_json bytes;
  for (const auto& [k, v] : r.bytes_per_iteration) bytes[k] = v;
  j["bytes_per_iteration"] = bytes;
  j["algorithm"] = std::string(to_string(r.algorithm));
  // Over TCP only (the platform's NICs without RDMA, or asked for): absent, the native links.
  if (scenario.allreduce.transport == Transport::kTcp) j["transport"] = "tcp";
  // Parameter servers only (absent otherwise, so other summaries keep their bytes): what the
  // run assumed, gRPC's receive rates included (0 = free).
  if (scenario.parameter_server.tasks > 0) {
    const ParameterServerConfig& ps = scenario.parameter_server;
    j["parameter_server"] = {{"tasks", ps.tasks},
                             {"placement", std::string(to_string(ps.placement))},
                             {"mode", std::string(to_string(ps.mode))},
                             {"variables", std::string(to_string(ps.variables))},
                             {"sharding", std::string(to_string(ps.sharding))},
                             {"receive_rate_Bps", ps.receive_Bps},
                             {"receive_rate_large_Bps", ps.receive_large_Bps}};
  }
  j["fidelity"] = std::string(to_string(r.fidelity));
  if (!r.op_tiers.empty()) {
    // What priced the ops: per tier the ops of one iteration and their summed time, and the
    // share of that time priced from measurements (every tier but the datasheet's).
    ordered_json tiers;
    double total = 0.0, measured = 0.0;
    for (const auto& [tier, use] : r.op_tiers) {
      tiers[tier] = {{"ops", use.ops}, {"seconds", use.seconds}};
      total += use.seconds;
      if (tier != tier_name(calibration::CostTier::kDatasheet)) measured += use.seconds;
    }
    j["op_costs"] = {{"tiers", tiers},
                     {"measured_time_share", total > 0.0 ? measured / total : 0.0}};
    // Only where it happens (a framework efficiency above 1): compute ops faster than the peak.
    if (r.above_peak_ops > 0)
      j["op_costs"]["above_peak"] = {{"ops", r.above_peak_ops},
                                     {"max_rate_over_peak", r.above_peak_max_ratio}};
  }
  if (!r.collective_tier.empty()) {
    // NCCL's choices per iteration ("algorithm/protocol": buckets) and the tier of their terms.
    ordered_json choices;
    for (const auto& [k, v] : r.collective_choices) choices[k] = v;
    j["collectives"] = {{"tier", r.collective_tier}, {"choices", choices}};
    // Only where it happens: the backward pass's delay from the SMs the collectives held.
    if (r.compute_lost_to_collectives_s > 0.0)
      j["collectives"]["compute_lost_s"] = r.compute_lost_to_collectives_s;
  }
  j["iterations"] = static_cast<int>(r.iterations.size());
  j["simulated_time_s"] = r.iterations.empty() ? 0.0 : r.iterations.back().end_s;
  // The staged input pipeline's settings as replayed (absent for the original memory model, so
  // those summaries keep their bytes).
  if (r.input.staged()) {
    const InputPipelineSpec& in = r.input;
    ordered_json input;
    input["source"] = std::string(to_string(in.source));
    input["stored_sample_bytes"] = in.stored_bytes_per_sample;
    input["h2d_sample_bytes"] = scenario.input_sample_bytes > 0.0
                                    ? ordered_json(scenario.input_sample_bytes)
                                    : ordered_json("model input");
    input["decode_rate_per_core"] =
        in.decode_samples_per_s > 0.0 ? ordered_json(in.decode_samples_per_s) : ordered_json();
    input["decode_cores"] =
        in.decode_samples_per_s > 0.0 ? ordered_json(in.decode_cores) : ordered_json();
    input["prefetch_depth"] = in.prefetch_depth;
    j["input"] = input;
  }
  return j;
}

void add_efficiency(nlohmann::ordered_json& point, double tput_gpu, double tput_node) {
  const double tput = point["throughput_samples_per_s"].get<double>();
  const int gpus = point["gpus"].get<int>();
  const int nodes = point["nodes"].get<int>();
  auto& e = point["scaling_efficiency"];
  e["vs_1_gpu"] = tput_gpu > 0.0 ? ordered_json(tput / (gpus * tput_gpu)) : ordered_json();
  e["vs_1_node"] = tput_node > 0.0 ? ordered_json(tput / (nodes * tput_node)) : ordered_json();
}

namespace {

std::string num(double v) { return fmt::format("{:.9g}", v); }

}  // namespace

// Declared in sim/scenario.hpp (the trace keys are the scenario's).
std::vector<int> trace_nodes_for(const Scenario& s, int nodes) {
  std::vector<int> out;
  if (!s.trace_node_list.empty()) {
    for (int n : s.trace_node_list)
      if (n < nodes) out.push_back(n);
  } else {
    // An even sample: first, last and evenly spaced between.
    const int k = std::min(std::max(1, s.trace_nodes), nodes);
    for (int i = 0; i < k; ++i)
      out.push_back(k == 1 ? 0 : static_cast<int>((static_cast<long>(nodes - 1) * i) / (k - 1)));
  }
  if (out.empty() || out.front() != 0) out.insert(out.begin(), 0);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void write_point_files(const std::string& dir, const JobResult& r) {
  // With a staged input pipeline: rank 0's storage-read and decode time inside each iteration
  // (those stages work on later batches while this one computes).
  const bool staged = r.input.staged();
  const auto busy = [&](Stream track, const IterationRecord& it) {
    double t = 0.0;  // one stage works on one batch at a time: its intervals do not overlap
    for (const Interval& iv : r.intervals)
      if (iv.rank == 0 && iv.stream == track)
        t += std::max(0.0, std::min(iv.end_s, it.end_s) - std::max(iv.start_s, it.start_s));
    return t;
  };
  common::write_file_atomic(dir + "/iterations.csv", [&](std::ostream& o) {
    o << "iteration,start_s,end_s,time_s,compute_s,exposed_comm_s,io_stall_s,copy_s,idle_s,"
         "comm_total_s,buckets"
      << (staged ? ",read_s,decode_s" : "") << '\n';
    for (const IterationRecord& it : r.iterations) {
      o << it.iteration << ',' << num(it.start_s) << ',' << num(it.end_s) << ','
        << num(it.end_s - it.start_s) << ',' << num(it.breakdown.compute_s) << ','
        << num(it.breakdown.exposed_comm_s) << ',' << num(it.breakdown.io_stall_s) << ','
        << num(it.breakdown.copy_s) << ',' << num(it.breakdown.idle_s) << ','
        << num(it.comm_total_s) << ',' << it.buckets;
      if (staged) o << ',' << num(busy(Stream::kRead, it)) << ',' << num(busy(Stream::kDecode, it));
      o << '\n';
    }
  });
  std::vector<const Interval*> sorted;
  sorted.reserve(r.intervals.size());
  for (const Interval& iv : r.intervals) sorted.push_back(&iv);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Interval* a, const Interval* b) {
    if (a->rank != b->rank) return a->rank < b->rank;
    if (a->start_s != b->start_s) return a->start_s < b->start_s;
    return static_cast<int>(a->stream) < static_cast<int>(b->stream);
  });
  common::write_file_atomic(dir + "/ops.csv", [&](std::ostream& o) {
    o << "node,gpu,iteration,op,stream,start_s,end_s,duration_s,tier,bytes\n";
    for (const Interval* iv : sorted)
      o << iv->rank / r.gpus_per_node << ',' << iv->rank % r.gpus_per_node << ',' << iv->iteration
        << ',' << common::csv_field(iv->name) << ',' << to_string(iv->stream) << ','
        << num(iv->start_s) << ',' << num(iv->end_s) << ',' << num(iv->end_s - iv->start_s) << ','
        << common::csv_field(iv->tier) << ',' << num(iv->bytes) << '\n';
  });
  common::write_file_atomic(dir + "/trace.json",
                            [&](std::ostream& o) { write_chrome_trace(o, r); });
}

void write_chrome_trace(std::ostream& o, const JobResult& r) {
  TraceWriter trace(o);  // event by event (sim/trace_writer.hpp says why)
  std::map<int, bool> nodes_seen;
  std::map<int, bool> threads_seen;
  std::vector<const Interval*> sorted;
  for (const Interval& iv : r.intervals) sorted.push_back(&iv);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Interval* a, const Interval* b) {
    if (a->rank != b->rank) return a->rank < b->rank;
    return a->start_s < b->start_s;
  });
  for (const Interval* iv : sorted) {
    const int node = iv->rank / r.gpus_per_node, gpu = iv->rank % r.gpus_per_node;
    const int s = static_cast<int>(iv->stream);
    // GPU streams first (gpu * 3 + stream), then the input tracks (read, decode) of each GPU.
    const int tid = s < kStreamCount ? gpu * kStreamCount + s
                                     : r.gpus_per_node * kStreamCount +
                                           gpu * (kTrackCount - kStreamCount) + s - kStreamCount;
    if (!nodes_seen[node]) {
      nodes_seen[node] = true;
      trace.emit({{"name", "process_name"},
                  {"ph", "M"},
                  {"pid", node},
                  {"tid", 0},
                  {"args", {{"name", fmt::format("node{:04d}", node)}}}});
    }
    const int key = iv->rank * kTrackCount + s;
    if (!threads_seen[key]) {
      threads_seen[key] = true;
      trace.emit({{"name", "thread_name"},
                  {"ph", "M"},
                  {"pid", node},
                  {"tid", tid},
                  {"args", {{"name", fmt::format("gpu{}/{}", gpu, to_string(iv->stream))}}}});
    }
    ordered_json args = {{"iteration", iv->iteration}};
    if (!iv->tier.empty()) args["tier"] = iv->tier;
    if (iv->bytes > 0.0) args["bytes"] = iv->bytes;
    trace.emit({{"name", iv->name},
                {"cat", to_string(iv->stream)},
                {"ph", "X"},
                {"pid", node},
                {"tid", tid},
                {"ts", iv->start_s * 1e6},
                {"dur", (iv->end_s - iv->start_s) * 1e6},
                {"args", args}});
  }
}

std::string chrome_trace(const JobResult& r) {
  std::ostringstream o;
  write_chrome_trace(o, r);
  return o.str();
}

void write_summary(const std::string& dir, const Scenario& s,
                   const std::vector<nlohmann::ordered_json>& points) {
  ordered_json j;
  j["scenario"] = s.name;
  j["platform"] = s.platform;
  j["model"] = s.model;
  if (const std::int64_t seq = effective_seq_len(s); seq > 0) j["seq_len"] = seq;
  // Only when fused, so other summaries keep their bytes.
  if (s.fused_attention) j["attention"] = "fused";
  j["precision"] = s.llm ? std::string(models::to_string(s.llm->parallel.precision))
                         : std::string(common::to_string(s.precision));
  j["seed"] = s.seed;
  if (points.size() == 1) {
    for (const auto& [k, v] : points.front().items()) j[k] = v;
  } else {
    j["points"] = points;
  }
  j["tool"] = {
      {"version", common::kVersion}, {"git", common::kGitHash}, {"simgrid", simgrid_version()}};
  common::write_file_atomic(dir + "/summary.json", j.dump(2) + "\n");
  common::write_file_atomic(dir + "/scenario.resolved.yaml", s.resolved_yaml);
}

std::string format_table(const Scenario& s, const std::vector<nlohmann::ordered_json>& points) {
  std::ostringstream o;
  const std::string seq = s.seq_len > 0 ? fmt::format(" (seq_len {})", s.seq_len) : "";
  o << fmt::format("{} — {}{} on {}, {} per GPU batch {}\n", s.name, s.model, seq, s.platform,
                   common::to_string(s.precision), s.batch_per_gpu);
  // The I/O stall column only where a point replayed a staged input pipeline.
  const bool io = std::any_of(points.begin(), points.end(),
                              [](const ordered_json& p) { return p.contains("input"); });
  o << fmt::format(
      "{:>6} {:>7} {:>11} {:>13} {:>7} {:>7} {:>10} {:>10} {}{:>9} {:>8} {:>6} {:>5}\n", "nodes",
      "gpus", "iter_ms", "samples/s", "eff_gpu", "eff_node", "compute_ms", "exp_comm_ms",
      io ? fmt::format("{:>9} ", "io_ms") : "", "copy_ms", "idle_ms", "util", "fid");
  const auto pct = [](const ordered_json& v) {
    return v.is_null() ? std::string("-") : fmt::format("{:.1f}%", 100.0 * v.get<double>());
  };
  for (const ordered_json& p : points) {
    const auto& b = p["breakdown"];
    o << fmt::format(
        "{:>6} {:>7} {:>11.2f} {:>13.1f} {:>7} {:>7} {:>10.2f} {:>10.2f} {}{:>9.2f} {:>8.2f} "
        "{:>5.1f}% {:>5}\n",
        p["nodes"].get<int>(), p["gpus"].get<int>(), 1e3 * p["iteration_time_s"].get<double>(),
        p["throughput_samples_per_s"].get<double>(), pct(p["scaling_efficiency"]["vs_1_gpu"]),
        pct(p["scaling_efficiency"]["vs_1_node"]), 1e3 * b["compute_s"].get<double>(),
        1e3 * b["exposed_comm_s"].get<double>(),
        io ? fmt::format("{:>9.2f} ", 1e3 * b["io_stall_s"].get<double>()) : "",
        1e3 * b["copy_s"].get<double>(), 1e3 * b["idle_s"].get<double>(),
        100.0 * p["gpu_utilization"].get<double>(), p["fidelity"].get<std::string>());
  }
  // What priced the ops (the same step program at every point): how much rests on measurements.
  if (!points.empty() && points.front().contains("op_costs")) {
    const ordered_json& c = points.front()["op_costs"];
    std::string tiers;
    for (const auto& [tier, use] : c["tiers"].items())
      tiers += fmt::format("{}{} {} ops", tiers.empty() ? "" : ", ", tier, use["ops"].get<int>());
    o << fmt::format("op costs: {:.1f}% of the step's op time priced from measured kernels ({})\n",
                     100.0 * c["measured_time_share"].get<double>(), tiers);
    if (c.contains("above_peak"))
      o << fmt::format(
          "op costs: {} compute ops run faster than the GPU's datasheet peak (up to {:.2f}x; a "
          "convolution counts against twice the peak): a framework efficiency above 1, or kernels "
          "measured above the catalog's peak\n",
          c["above_peak"]["ops"].get<int>(), c["above_peak"]["max_rate_over_peak"].get<double>());
  }
  return o.str();
}

}  // namespace scalecast::sim
