#include "cli/point_runner.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cli/run_guard.hpp"
#include "common/interrupt.hpp"
#include "common/progress.hpp"
#include "common/simulation_environment.hpp"
#include "sim/outputs.hpp"

namespace scalecast::cli {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Running {
  pid_t pid;
  std::size_t index;
  std::string json, err;
};

// A point process killed while writing leaves its temporary copy (`NAME.tmp.PID`,
// common/atomic_file writes through it) in the point's folder: remove this process's, never a
// finished file.
void remove_temporaries(const std::string& dir, pid_t pid) {
  namespace fs = std::filesystem;
  if (dir.empty()) return;
  const std::string suffix = ".tmp." + std::to_string(pid);
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file(ec) && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      doomed.push_back(it->path());
  }
  for (const fs::path& f : doomed) fs::remove(f, ec);
}

}  // namespace

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the scalecast executable (/proc/self/exe)");
  return p.string();
}

std::vector<nlohmann::ordered_json> run_points(const std::vector<PointJob>& points, int jobs,
                                               bool progress) {
  if (jobs <= 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  install_interrupt_handlers();
  const std::string exe = self_exe();
  const TempDir tmp("points");  // private (0700, fresh name): its files cannot be redirected
  std::vector<nlohmann::ordered_json> results(points.size());
  std::map<pid_t, Running> running;
  std::size_t next = 0;
  std::string failure;
  bool input_failure = false;
  // Points done out of points.size(): on stderr, and only with --progress or a terminal there.
  std::unique_ptr<common::Progress> bar;
  if (progress || ::isatty(STDERR_FILENO))
    bar = std::make_unique<common::Progress>("points", points.size(), 10.0);
  const auto kill_all = [&] {
    for (const auto& [pid, r] : running) ::kill(pid, SIGTERM);
  };
  const auto reap_one = [&] {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) return;  // a signal: the loop checks interrupted()
      throw std::runtime_error(std::string("waiting for point processes: ") + std::strerror(errno));
    }
    auto it = running.find(pid);
    if (it == running.end()) return;
    Running r = it->second;
    running.erase(it);
    unregister_child(pid);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      remove_temporaries(points[r.index].out_dir, pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      results[r.index] = nlohmann::ordered_json::parse(read_file(r.json));
      if (bar) bar->advance(1, std::to_string(points[r.index].nodes) + " nodes");
    } else if (failure.empty() && !interrupted()) {
      std::string err = read_file(r.err);
      if (err.size() > 2000) err = err.substr(err.size() - 2000);
      while (!err.empty() && err.back() == '\n') err.pop_back();
      input_failure = WIFEXITED(status) && WEXITSTATUS(status) == 1;
      // A point killed by a signal (the out-of-memory killer) wrote nothing: say how it ended.
      const std::string how = common::describe_child_exit(common::exit_code_of(status));
      failure = input_failure ? err
                              : "point with " + std::to_string(points[r.index].nodes) +
                                    " nodes failed (" + how + ")" + (err.empty() ? "" : ": " + err);
      kill_all();  // the run fails anyway: do not wait for the others
    }
  };
  while (next < points.size() || !running.empty()) {
    if (interrupted()) kill_all();
    while (next < points.size() && static_cast<int>(running.size()) < jobs && failure.empty() &&
           !interrupted()) {
      const PointJob& p = points[next];
      const std::string base = tmp.path() + "/point-" + std::to_string(next);
      const std::string json = p.json_path.empty() ? base + ".json" : p.json_path;
      std::vector<std::string> args = {exe, "--quiet", "run", p.scenario};
      for (const std::string& o : p.overrides) args.insert(args.end(), {"--set", o});
      args.insert(args.end(), {"--point", std::to_string(p.nodes), "--point-gpus",
                               std::to_string(p.gpus_per_node), "--point-json", json});
      if (!p.out_dir.empty()) args.insert(args.end(), {"--point-dir", p.out_dir});
      args.insert(args.end(), p.extra_args.begin(), p.extra_args.end());
      // With progress on, the point reports its iterations on our stderr (its own stderr is a
      // file, read for errors): a long flow-fidelity point shows it is moving.
      if (bar) args.insert(args.end(), {"--point-progress-fd", "3"});
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      if (bar) posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, 3);
      posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, (base + ".err").c_str(),
                                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
      pid_t pid = 0;
      const int rc = common::spawn_simulation(&pid, exe, &fa, argv.data());
      posix_spawn_file_actions_destroy(&fa);
      if (rc != 0) {
        kill_all();
        throw std::runtime_error(std::string("cannot start a point process: ") + std::strerror(rc));
      }
      register_child(pid);
      running[pid] = {pid, next, json, base + ".err"};
      ++next;
    }
    if (!running.empty()) reap_one();
    if ((!failure.empty() || interrupted()) && running.empty()) break;
  }
  throw_if_interrupted();
  if (!failure.empty()) {
    if (input_failure) throw ChildInputError(failure);
    throw std::runtime_error(failure);
  }
  if (bar) bar->finish();
  return results;
}

std::vector<nlohmann::ordered_json> run_with_baselines(const std::string& scenario,
                                                       const std::vector<std::string>& overrides,
                                                       const std::vector<int>& nodes,
                                                       const std::string& out_dir, int jobs,
                                                       bool progress) {
  std::vector<PointJob> points;
  const bool single = nodes.size() == 1;
  for (int n : nodes) {
    std::string dir;
    if (!out_dir.empty()) dir = single ? out_dir : out_dir + "/" + sim::nodes_folder(n);
    // With several node counts each point keeps its own summary next to its files as soon as
    // it finishes (nodes-N/point.json), so an interrupted run keeps the numbers of the points
    // it finished, not only their traces; summary.json, written at the end, adds efficiencies.
    points.push_back(
        {scenario, overrides, n, 0, dir, single || dir.empty() ? "" : dir + "/" + sim::kPointJson});
  }
  // Baselines: one GPU, and one node (unless the list has it).
  points.push_back({scenario, overrides, 1, 1, "", ""});
  bool has_one_node = false;
  for (int n : nodes) has_one_node = has_one_node || n == 1;
  if (!has_one_node) points.push_back({scenario, overrides, 1, 0, "", ""});
  std::vector<nlohmann::ordered_json> res = run_points(points, jobs, progress);
  const double tput_gpu = res[nodes.size()]["throughput_samples_per_s"].get<double>();
  double tput_node = 0.0;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i] == 1) tput_node = res[i]["throughput_samples_per_s"].get<double>();
  if (!has_one_node) tput_node = res.back()["throughput_samples_per_s"].get<double>();
  res.resize(nodes.size());
  for (auto& p : res) sim::add_efficiency(p, tput_gpu, tput_node);
  return res;
}

}  // namespace scalecast::cli
