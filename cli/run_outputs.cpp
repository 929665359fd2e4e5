#include "cli/run_outputs.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "common/atomic_file.hpp"
#include "common/config_error.hpp"
#include "common/input_file.hpp"
#include "sim/llm_outputs.hpp"
#include "sim/multi_job_scenario.hpp"
#include "sim/outputs.hpp"

namespace scalecast::cli {
namespace {

void add_in(std::vector<std::string>& out, const std::string& folder,
            const std::vector<std::string>& files) {
  for (const std::string& f : files) out.push_back(folder.empty() ? f : folder + "/" + f);
}

// A manifest line names a file inside the folder: relative, every part a name.
bool inside(const std::string& path) {
  if (path.empty() || path.front() == '/') return false;
  std::size_t start = 0;
  for (std::size_t slash = 0; slash != std::string::npos; start = slash + 1) {
    slash = path.find('/', start);
    const std::string part = path.substr(start, slash == std::string::npos ? slash : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> planned_outputs(const sim::Scenario& s) {
  std::vector<std::string> out;
  if (s.multi) {
    for (int k : s.multi->training()) {
      const sim::MixJob& job = s.multi->jobs[static_cast<std::size_t>(k)];
      add_in(out, sim::job_folder(job.name),
             job.scenario.llm ? sim::kLlmPointFiles : sim::kPointFiles);
    }
    out.push_back("trace.json");  // the jobs' traces in one (run_multi.cpp write_mix_trace)
  } else if (s.llm) {
    add_in(out, "", sim::kLlmPointFiles);  // one size: the point writes into the folder itself
  } else if (s.nodes.size() == 1) {
    add_in(out, "", sim::kPointFiles);
  } else {
    for (int n : s.nodes) {
      const std::string folder = sim::nodes_folder(n);
      out.push_back(folder + "/" + sim::kPointJson);
      add_in(out, folder, sim::kPointFiles);
    }
  }
  add_in(out, "", sim::kSummaryFiles);
  return out;
}

void remove_previous_outputs(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string manifest = dir + "/" + kManifestName;
  struct stat st {};
  if (::lstat(manifest.c_str(), &st) != 0) return;  // no earlier run (or one before manifests)
  const std::string text = common::read_input_file(manifest, common::kYamlMaxBytes);
  common::check_utf8(text, manifest);
  std::vector<std::string> files;
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    if (!inside(line))
      throw common::ConfigError(
          manifest, line_no, 1, "",
          fmt::format("expected the path of a file inside {} (relative, without . or .. parts), "
                      "got \"{}\"; this file lists what the last `scalecast run --out` wrote "
                      "there, for the next run to remove: fix the line or remove the file",
                      dir, line));
    files.push_back(line);
  }
  // Every folder on the way must be a real folder of DIR: through a symbolic link in place of
  // nodes-1/, the file removed would be one outside it.
  const auto real_folders = [&](const fs::path& f) {
    fs::path p = dir;
    for (const fs::path& part : f.parent_path()) {
      p /= part;
      if (::lstat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    }
    return true;
  };
  std::vector<fs::path> folders;
  for (const std::string& f : files) {
    const std::string path = dir + "/" + f;
    if (!real_folders(f)) continue;
    if (::lstat(path.c_str(), &st) != 0) continue;  // not written (an interrupted run)
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;
    if (::unlink(path.c_str()) != 0)
      throw std::runtime_error(
          fmt::format("{}: cannot remove the earlier run's file: {}", path, std::strerror(errno)));
    for (fs::path p = fs::path(f).parent_path(); !p.empty(); p = p.parent_path())
      folders.push_back(p);
  }
  // Deepest first; a folder that still holds something (yours) stays.
  std::sort(folders.begin(), folders.end(), [](const fs::path& a, const fs::path& b) {
    const auto depth = [](const fs::path& p) { return std::distance(p.begin(), p.end()); };
    return depth(a) != depth(b) ? depth(a) > depth(b) : a < b;
  });
  folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
  for (const fs::path& f : folders) ::rmdir((fs::path(dir) / f).c_str());
  if (::unlink(manifest.c_str()) != 0 && errno != ENOENT)
    throw std::runtime_error(fmt::format("{}: cannot remove the earlier run's manifest: {}",
                                         manifest, std::strerror(errno)));
}

void write_manifest(const std::string& dir, const std::vector<std::string>& files) {
  std::string text =
      "# The files `scalecast run --out` writes into this folder. The next run into it removes\n"
      "# them (and the folders they leave empty) before it writes its own; other files stay.\n";
  for (const std::string& f : files) text += f + "\n";
  common::write_file_atomic(dir + "/" + kManifestName, text);
}

}  // namespace scalecast::cli
