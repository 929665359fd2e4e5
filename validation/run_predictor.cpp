#include "validation/run_predictor.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.hpp"
#include "common/config_error.hpp"
#include "common/config_node.hpp"
#include "common/interrupt.hpp"
#include "models/transformer.hpp"
#include "models/zoo.hpp"
#include "platforms/cluster_size.hpp"
#include "platforms/data_dir.hpp"
#include "platforms/platform.hpp"
#include "sim/scenario.hpp"
#include "validation/protocol.hpp"

namespace scalecast::validation {
namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The child's error line ("file:line: error: ..."), without the trailing newline.
std::string first_error_line(const std::string& output) {
  std::istringstream in(output);
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    if (line.find("error") != std::string::npos) return line;
    if (!line.empty()) last = line;
  }
  return last;
}

// The last `lines` non-empty lines of a child's output, joined by " | " (what it said before it
// failed: SimGrid and the engine write the cause last).
std::string output_tail(const std::string& output, std::size_t lines = 3) {
  std::istringstream in(output);
  std::vector<std::string> kept;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    kept.push_back(line);
    if (kept.size() > lines) kept.erase(kept.begin());
  }
  std::string out;
  for (const std::string& l : kept) out += (out.empty() ? "" : " | ") + l;
  return out.empty() ? "(no output)" : out;
}

double number_at(const nlohmann::json& j, const char* key, const std::string& name) {
  if (!j.contains(key) || !j[key].is_number()) {
    throw common::ConfigError(name, 0, 0, key, "expected a number in the replay summary");
  }
  return j[key].get<double>();
}

// A platform named by a path (has a slash or ends in .yaml) resolves against the file's folder.
std::string platform_ref(const Configuration& c) {
  const bool is_path = c.system.find('/') != std::string::npos ||
                       (c.system.size() > 5 && c.system.ends_with(".yaml"));
  if (!is_path) return c.system;
  const std::filesystem::path p(c.system);
  return p.is_absolute() ? p.string() : (std::filesystem::path(c.base_dir) / p).string();
}

// Why `model` (named `name`) cannot take the point's sequence length: "" when it can or none is
// given.
std::string seq_len_problem(const models::Model& model, const std::string& name,
                            std::optional<int> seq_len) {
  if (!seq_len) return "";
  if (!model.input.tokens) {
    return fmt::format("seq_len {} is given but {} takes images, not token sequences", *seq_len,
                       name);
  }
  try {
    models::infer_shapes(model, *seq_len);
  } catch (const common::ConfigError& e) {
    return fmt::format("{} cannot take sequence length {}: {}", name, *seq_len, e.message());
  }
  return "";
}

// The platform a validation point names, resolved against its file's folder (base_dir).
std::string platform_ref_of(const ValidationPoint& p, const std::string& base_dir) {
  Configuration c;
  c.system = p.system;
  c.base_dir = base_dir;
  return platform_ref(c);
}

}  // namespace

// What a scenario cannot say: a model the zoo does not know, or a sequence length for a model
// that does not read token sequences (or longer than the model allows). Parameter servers,
// MPI reducing in host memory and TCP are simulated (scenario_yaml()).
void check_expressible(const Configuration& c) {
  if (!c.parallel.empty()) {
    // An LLM point: its model must be a transformer (zoo name or file); the scenario loader
    // checks the parallel map against it.
    std::optional<models::TransformerSpec> t;
    try {
      t = models::load_transformer(c.model);
    } catch (const std::exception& e) {
      throw Unsupported(e.what());
    }
    if (!t) throw Unsupported(c.model + " is not a transformer of the LLM zoo");
    return;
  }
  models::Model model;
  try {
    model = models::load_model(c.model);
  } catch (const std::invalid_argument& e) {
    throw Unsupported(e.what());
  }
  const std::string problem = seq_len_problem(model, c.model, c.seq_len);
  if (!problem.empty()) throw Unsupported(problem);
}

void check_node_counts(const ValidationFile& file) {
  const std::string base_dir = base_dir_of(file.path);
  std::map<std::string, std::optional<platforms::Platform>> loaded;
  for (const ValidationPoint& p : file.points) {
    const std::string ref = platform_ref_of(p, base_dir);
    auto [it, fresh] = loaded.try_emplace(ref);
    if (fresh) {
      try {
        it->second = platforms::load_platform(ref);
      } catch (const common::ConfigError&) {
        // Reported as the point's skip reason by its simulation (FORMAT.md 5.4).
      }
    }
    if (!it->second) continue;
    // A point builds its own nodes, at most kMaxBuiltNodes (sim/cluster.cpp says so for run):
    // beyond, its simulation ran out of memory instead of the file stopping here.
    if (p.nodes > platforms::kMaxBuiltNodes)
      throw common::ConfigError(
          file.path, p.nodes_line, p.nodes_column, p.nodes_key,
          fmt::format("point {}: expected at most {} nodes, got {}: one simulation builds at most "
                      "{} nodes",
                      p.id, common::format_count(platforms::kMaxBuiltNodes),
                      common::format_count(p.nodes),
                      common::format_count(platforms::kMaxBuiltNodes)));
    const long size = std::max<long>(it->second->total_nodes(), p.nodes);
    const std::string problem = platforms::node_count_problem(*it->second, size);
    if (!problem.empty()) {
      throw common::ConfigError(file.path, p.nodes_line, p.nodes_column, p.nodes_key,
                                fmt::format("point {}: {}", p.id, problem));
    }
  }
}

void mark_unsimulatable(ValidationFile& file) {
  const std::string base_dir = base_dir_of(file.path);
  std::map<std::string, std::string> platform_problem;        // by reference: "" when it loads
  std::map<std::string, std::string> model_problem;           // by name and kind
  std::map<std::string, models::Model> graph_models;          // loaded graph models, by name
  std::map<std::string, models::TransformerSpec> llm_models;  // loaded transformers, by name
  for (ValidationPoint& p : file.points) {
    const std::string ref = platform_ref_of(p, base_dir);
    auto [it, fresh] = platform_problem.try_emplace(ref);
    if (fresh) {
      try {
        (void)platforms::load_platform(ref);
      } catch (const common::ConfigError& e) {
        // No platform of that name: the point's own fault. A platform file with a fault at a
        // line of its own stays an input error (the preflight names it).
        if (e.line() == 0) it->second = e.message();
      }
    }
    if (!it->second.empty()) {
      p.unsimulatable = p.system_at.reason(it->second);
      continue;
    }
    const std::string model_key = (p.is_parallel() ? "llm:" : "graph:") + p.model;
    auto [m, new_model] = model_problem.try_emplace(model_key);
    if (new_model) {
      try {
        if (p.is_parallel()) {
          if (auto t = models::load_transformer(p.model)) {
            llm_models.emplace(p.model, *t);
          } else {
            m->second = fmt::format("\"{}\" is not a transformer of the LLM zoo", p.model);
          }
        } else {
          graph_models.emplace(p.model, models::load_model(p.model));
        }
      } catch (const common::ConfigError& e) {
        if (e.line() == 0) m->second = e.message();  // a model file's own fault: left as is
      } catch (const std::invalid_argument& e) {
        m->second = e.what();  // an unknown zoo name
      }
    }
    if (!m->second.empty()) {
      p.unsimulatable = p.model_at.reason(m->second);
      continue;
    }
    // A sequence beyond a learned position table (gpt3_1p7b at 8,192): at the point's seq_len,
    // before any simulation, not as the simulator's refusal of the scenario validate wrote.
    if (const auto llm = llm_models.find(p.model); p.is_parallel() && llm != llm_models.end()) {
      const std::string problem =
          p.seq_len ? models::position_table_problem(llm->second, *p.seq_len) : "";
      if (!problem.empty()) p.unsimulatable = p.seq_len_at.reason(problem);
      continue;
    }
    const auto graph = graph_models.find(p.model);
    if (p.is_parallel() || graph == graph_models.end()) continue;
    const std::string problem = seq_len_problem(graph->second, p.model, p.seq_len);
    if (!problem.empty()) p.unsimulatable = p.seq_len_at.reason(problem);
  }
}

void create_work_dir(const std::string& option, const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec))
    throw common::ConfigError(
        option, 0, 0, "",
        dir + ": is not a folder; give a folder to keep the simulations in (created if missing)");
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw common::ConfigError(option, 0, 0, "",
                              fmt::format("{}: cannot create the folder: {}", dir, ec.message()));
}

std::vector<std::string> default_calibration_databases() {
  for (const std::string& dir : platforms::data_dirs()) {
    const std::filesystem::path folder = std::filesystem::path(dir) / "calibration" / "data";
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec)) continue;
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      if (entry.path().extension() == ".yaml") {
        files.push_back(std::filesystem::absolute(entry.path()).string());
      }
    }
    std::sort(files.begin(), files.end());
    return files;
  }
  return {};
}

std::string scenario_yaml(const Configuration& c, const std::vector<std::string>& calibration) {
  // Scenario format: scenarios/README.md (sim/scenario.cpp).
  std::string y = "# Written by scalecast validate for one validation configuration.\n";
  y += fmt::format("platform: \"{}\"\n", platform_ref(c));
  y += fmt::format("model: \"{}\"\n", c.model);
  if (!c.parallel.empty()) {
    // LLM training (scenarios/README.md "LLM training"): batch, sequence and precision are in
    // the parallel map; the measured run fit, so the memory estimate does not veto it.
    y += fmt::format("nodes: {}\n", c.nodes);
    y += "cluster:\n  nodes: fit\n";
    y += fmt::format("gpus_per_node: {}\n", c.gpus / c.nodes);
    y += fmt::format("parallel: {}\n", c.parallel);
    y += "memory_check: false\n";
    if (!calibration.empty()) {
      y += "calibration:\n";
      for (const std::string& db : calibration) y += fmt::format("  - \"{}\"\n", db);
    }
    y += fmt::format("framework_efficiency: {:.17g}\n", c.framework_efficiency);
    return y;
  }
  // The validation file gives seq_len for language models only; check_expressible() rejects it
  // for a model that does not read token sequences, as the scenario loader would.
  if (c.seq_len) y += fmt::format("seq_len: {}\n", *c.seq_len);
  if (c.fused_attention) y += "attention: fused\n";
  // amp_fp16 is the fp16 mixed-precision recipe; "unknown" arrives here as fp32 (FORMAT.md 5.6).
  y += fmt::format("precision: {}\n", c.precision == "amp_fp16" ? "fp16" : c.precision);
  y += fmt::format("batch_per_gpu: {}\n", c.batch_per_gpu);
  // Gradient accumulation as the source states it (FORMAT.md section 2): one exchange per
  // `accumulation` micro-batches of batch_per_gpu.
  if (c.accumulation > 1) y += fmt::format("accumulation: {}\n", c.accumulation);
  // A run of unknown precision is simulated as fp32 and would not fit where it really used mixed
  // precision (CL-1): only there may the memory estimate not veto a measured run.
  if (!c.precision_stated) y += "memory_check: false\n";
  y += fmt::format("nodes: {}\n", c.nodes);
  // The system names a machine type: it is built as large as the point needs (sim/cluster.hpp).
  y += "cluster:\n  nodes: fit\n";
  y += fmt::format("gpus_per_node: {}\n", c.gpus / c.nodes);
  // One GPU and synchronous all-reduce are both data parallelism (one rank has nothing to
  // reduce). TensorFlow's gRPC parameter servers (FORMAT.md: parameter_server keeps the
  // variables on the PS tasks' GPUs, parameter_server_cpu in host memory) run as one task per
  // server beside its workers, synchronous: tf_cnn_benchmarks' distributed set-up (a ps task on
  // each worker host; --cross_replica_sync defaults to true) [assumption: the sources give the
  // servers only].
  const bool data_parallel = c.strategy == Strategy::kNone || c.strategy == Strategy::kAllreduce;
  if (data_parallel) {
    y += "strategy: data_parallel\n";
  } else {
    y += "strategy: parameter_server\n";
    // tf_cnn_benchmarks places the variables greedily by bytes over the tasks
    // (VariableMgrDistributedFetchFromPS: GreedyLoadBalancingStrategy, byte_size_load_fn).
    y += fmt::format(
        "parameter_server:\n  tasks: {}\n  placement: colocated\n  mode: sync\n"
        "  variables: {}\n  sharding: greedy\n",
        c.nodes, c.strategy == Strategy::kParameterServerCpu ? "cpu" : "gpu");
    // On one machine tf_cnn_benchmarks' parameter_server mode runs every tower in one process
    // (VariableMgrLocalFetchFromPS, no ps_hosts) [tf_cnn_benchmarks-variable_mgr]: variables move
    // between devices in memory, never through gRPC, so no process takes tensors out of gRPC
    // (sim/parameter_server.hpp).
    if (c.nodes == 1) y += "  receive_rate: 0GBps\n";
  }
  // comm: GPU collectives (nccl) or MPI reducing in host memory (mpi_cpu); absent = the
  // engine's default. tcp = TCP/IP over the platform's NICs (gRPC is TCP too); rdma = the
  // platform's native transport (RDMA), stated so that a platform without it refuses the point.
  const auto has = [&](const char* what) {
    return std::find(c.comm.begin(), c.comm.end(), what) != c.comm.end();
  };
  std::string allreduce;
  if (has("mpi_cpu")) {
    allreduce += "  library: mpi_cpu\n";
  } else if (has("nccl")) {
    allreduce += "  library: nccl\n";
  }
  if (has("tcp")) allreduce += "  transport: tcp\n";
  // A source that states RDMA asks for it: on a platform whose NICs have none, the scenario
  // refuses it rather than running TCP silently.
  if (has("rdma")) allreduce += "  transport: native\n";
  // The source's own exchange settings (validation file `allreduce`), after the framework's
  // defaults, which the scenario applies first.
  for (const auto& [key, value] : c.allreduce)
    allreduce += fmt::format("  {}: {}\n", key, value);  // values checked when read
  if (!allreduce.empty()) y += "allreduce:\n" + allreduce;
  // framework -> the scenario's `framework`: its gradient bucketing and fixed host costs
  // (sim/framework_preset.cpp, scenarios/README.md "Gradient bucketing"). pytorch (DDP) and
  // mxnet (NVIDIA's MLPerf Horovod set-up) are what their public sources ran. tensorflow is not
  // passed on: its sources ran three different Horovod set-ups (NVIDIA's defaults, aws-samples'
  // 16 MiB hierarchical fusion, 2017 Horovod), which one framework key cannot tell apart
  // (validation/README.md "Scenario mapping"); caffe2, chainer and nnl keep the defaults too.
  if (c.framework == "pytorch" || c.framework == "mxnet") {
    y += fmt::format("framework: {}\n", c.framework);
  }
  if (!calibration.empty()) {
    y += "calibration:\n";
    for (const std::string& db : calibration) y += fmt::format("  - \"{}\"\n", db);
  }
  y += fmt::format("framework_efficiency: {:.17g}\n", c.framework_efficiency);
  return y;
}

Prediction parse_summary_json(const std::string& text, const std::string& name) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw common::ConfigError(name, 0, 0, "", fmt::format("invalid JSON: {}", e.what()));
  }
  Prediction p;
  p.throughput_samples_per_s = number_at(j, "throughput_samples_per_s", name);
  p.iteration_time_s = number_at(j, "iteration_time_s", name);
  if (j.contains("breakdown") && j["breakdown"].is_object()) {
    const nlohmann::json& b = j["breakdown"];
    p.breakdown.compute_s = b.value("compute_s", 0.0);
    p.breakdown.exposed_comm_s = b.value("exposed_comm_s", 0.0);
    p.breakdown.io_stall_s = b.value("io_stall_s", 0.0);
    p.breakdown.copy_s = b.value("copy_s", 0.0);
    p.breakdown.idle_s = b.value("idle_s", 0.0);
  }
  if (j.contains("op_costs") && j["op_costs"].is_object() &&
      j["op_costs"].contains("measured_time_share") &&
      j["op_costs"]["measured_time_share"].is_number())
    p.measured_kernel_share = j["op_costs"]["measured_time_share"].get<double>();
  // LLM runs (sim/llm_outputs.cpp).
  p.tokens_per_s_per_gpu = j.value("tokens_per_s_per_gpu", 0.0);
  p.mfu = j.value("mfu", 0.0);
  p.hfu = j.value("hfu", 0.0);
  if (j.contains("flops") && j["flops"].is_object())
    p.peak_flops_per_gpu = j["flops"].value("peak_per_gpu", 0.0);
  return p;
}

int run_process(const std::vector<std::string>& argv, std::string& output) {
  common::throw_if_interrupted();
  std::string command;
  for (const std::string& a : argv) command += shell_quote(a) + " ";
  command += "2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot start " + argv.at(0));
  char buffer[4096];
  std::size_t n;
  output.clear();
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  common::throw_if_interrupted();  // a simulation cut short is no result
  return common::exit_code_of(status);
}

RunPredictor::RunPredictor(std::string scalecast_exe, std::string work_dir,
                           std::vector<std::string> calibration)
    : exe_(std::move(scalecast_exe)),
      work_dir_(std::move(work_dir)),
      calibration_(std::move(calibration)) {}

Prediction RunPredictor::predict(const Configuration& config) const {
  check_expressible(config);
  const std::string scenario = scenario_yaml(config, calibration_);
  int index;
  {
    std::lock_guard lock(mutex_);
    const auto hit = cache_.find(scenario);
    if (hit != cache_.end()) return hit->second;
    index = runs_++;
  }
  const std::filesystem::path dir =
      std::filesystem::path(work_dir_) / fmt::format("sim{:05d}", index);
  const std::string scenario_path = (dir / "scenario.yaml").string();
  common::write_file_atomic(scenario_path, scenario);
  // Point mode: one process simulating only this configuration (a plain `run` would also
  // simulate its 1-GPU and 1-node baselines, each in its own process, which validate never
  // reads). The point's summary has the same keys and values as summary.json's top level.
  const std::string point_json = (dir / "point.json").string();
  std::string output;
  const int rc =
      run_child({exe_, "-q", "run", scenario_path, "--point", std::to_string(config.nodes),
                 "--point-gpus", "0", "--point-json", point_json},
                (dir / "output.txt").string(), output);
  if (rc == 1) {
    // The temporary folder would make reports differ from run to run: name the file only, and
    // say it is the scenario validate wrote, not a file of the user's.
    std::string reason = first_error_line(output);
    for (std::size_t at; (at = reason.find(scenario_path)) != std::string::npos;) {
      reason.replace(at, scenario_path.size(), "scenario.yaml");
    }
    throw Unsupported("the simulator refused the scenario validate wrote for it: " + reason);
  }
  if (rc != 0) {
    // Unexpected (a crash, exit 4): the caller lists the point as failed with this reason.
    std::string tail = output_tail(output);
    for (std::size_t at; (at = tail.find(scenario_path)) != std::string::npos;) {
      tail.replace(at, scenario_path.size(), "scenario.yaml");
    }
    throw std::runtime_error(
        fmt::format("scalecast run {}: {}", common::describe_child_exit(rc), tail));
  }
  const Prediction p = parse_summary_json(read_text(point_json), point_json);
  std::lock_guard lock(mutex_);
  cache_.emplace(scenario, p);
  return p;
}

int RunPredictor::run_child(const std::vector<std::string>& argv, const std::string& output_path,
                            std::string& output) const {
  common::throw_if_interrupted();
  if (use_servers_) {
    std::unique_ptr<SimServer> server;
    int number = 0;
    {
      std::lock_guard lock(mutex_);
      if (!idle_servers_.empty()) {
        server = std::move(idle_servers_.back());
        idle_servers_.pop_back();
      } else {
        number = servers_started_++;
      }
    }
    try {
      if (!server) {
        std::filesystem::create_directories(work_dir_);
        const auto log = std::filesystem::path(work_dir_) / fmt::format("server{}.log", number);
        server = std::make_unique<SimServer>(exe_, calibration_, log.string());
      }
      const int rc = server->run(argv, output_path);
      common::throw_if_interrupted();  // its simulation was killed: no result, no fallback
      std::ifstream in(output_path);
      std::ostringstream text;
      text << in.rdbuf();
      output = text.str();
      std::lock_guard lock(mutex_);
      idle_servers_.push_back(std::move(server));
      return rc;
    } catch (const SimServerError& e) {
      common::throw_if_interrupted();  // killed by the interruption, not broken
      // A server that cannot start or stopped answering: this and later simulations of this
      // predictor start their own process, which gives the same results, only slower.
      if (use_servers_.exchange(false))
        spdlog::warn("validate: sim-server failed ({}); simulating in fresh processes", e.what());
    }
  }
  return run_process(argv, output);
}

RunScenarioSimulator::RunScenarioSimulator(std::string scalecast_exe, std::string work_dir,
                                           TraceReadOptions options)
    : exe_(std::move(scalecast_exe)),
      work_dir_(std::move(work_dir)),
      options_(std::move(options)) {}

Trace RunScenarioSimulator::simulate(const std::string& scenario_path) const {
  const std::string out = (std::filesystem::path(work_dir_) / "simulated").string();
  // Point mode, as validate does: only the scenario's own configuration (a plain `run` would
  // also simulate the 1-GPU and 1-node baselines, which a trace comparison never reads). The
  // point folder holds the same trace.json as `run --out` writes for that point. Loading the
  // scenario here gives its node count and reports a bad file before any process starts.
  const sim::Scenario scenario = sim::load_scenario(scenario_path);
  if (scenario.nodes.size() != 1) {
    // A list of node counts is valid for `run` but not here: point at the key.
    common::ConfigNode::load_file(scenario_path)
        .required("nodes")
        .fail(fmt::format("a trace is compared with one simulated configuration, this scenario "
                          "lists {} node counts; give the one the trace was measured at",
                          scenario.nodes.size()));
  }
  std::filesystem::create_directories(out);
  std::string output;
  const int rc =
      run_process({exe_, "-q", "run", scenario_path, "--point",
                   std::to_string(scenario.nodes.front()), "--point-gpus", "0", "--point-json",
                   (std::filesystem::path(out) / "point.json").string(), "--point-dir", out},
                  output);
  if (rc != 0) {
    throw std::runtime_error(fmt::format("scalecast run {} failed (exit {}): {}", scenario_path, rc,
                                         first_error_line(output)));
  }
  TraceReadOptions options = options_;
  options.format = TraceFormat::kChrome;  // trace.json: Chrome format, iterations in args
  return read_trace((std::filesystem::path(out) / "trace.json").string(), options);
}

}  // namespace scalecast::validation
