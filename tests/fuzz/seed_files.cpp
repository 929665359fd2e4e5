#include "tests/fuzz/seed_files.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace scalecast::fuzz {
namespace {

namespace fs = std::filesystem;

// Every *.yaml directly in `folder` (sorted: the seed order, hence the mutants, are stable).
std::vector<SeedFile> folder_seeds(const std::string& folder, const std::string& skip = "") {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fs::path(SCALECAST_SOURCE_DIR) / folder))
    if (e.path().extension() == ".yaml" && e.path().filename() != skip)
      names.push_back(folder + "/" + e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::vector<SeedFile> out;
  for (const std::string& n : names) out.push_back({n, read_source_file(n), ""});
  if (out.empty()) throw std::runtime_error("no seed files in " + folder);
  return out;
}

}  // namespace

std::string read_source_file(const std::string& relative) {
  std::ifstream in(fs::path(SCALECAST_SOURCE_DIR) / relative, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string excerpt(const std::string& text, int max_items, int stride) {
  std::istringstream in(text);
  std::string out, line;
  int item = -1, kept = 0;
  bool keep = true;
  while (std::getline(in, line)) {
    const bool top_level = !line.empty() && line[0] != ' ' && line[0] != '#';
    if (top_level)
      item = -1, kept = 0, keep = true;
    else if (line.rfind("  - ", 0) == 0) {
      ++item;
      keep = item % stride == 0 && kept < max_items;
      if (keep) ++kept;
    }
    if (keep || top_level) out += line + "\n";
  }
  return out;
}

std::vector<SeedFile> scenario_seeds() {
  std::vector<SeedFile> out = folder_seeds("scenarios");
  // No shipped scenario sets seq_len, whose check loads the model: a variant that does.
  const std::string bert = "scenarios/dgx-a100-superpod-bert.yaml";
  out.push_back({bert, read_source_file(bert) + "seq_len: 256\n", "+ seq_len: 256"});
  return out;
}
std::vector<SeedFile> platform_seeds() { return folder_seeds("platforms", "gpus.yaml"); }
std::vector<SeedFile> gpu_catalog_seeds() {
  return {{"platforms/gpus.yaml", read_source_file("platforms/gpus.yaml"), ""}};
}
std::vector<SeedFile> model_seeds() { return folder_seeds("models/examples"); }
std::vector<SeedFile> calibration_seeds() {
  std::vector<SeedFile> out = folder_seeds("calibration/data");
  for (SeedFile& s : out) {
    s.text = excerpt(s.text, 20, 50);
    s.variant = "excerpt: every 50th entry, at most 20";
  }
  return out;
}
std::vector<SeedFile> validation_seeds() {
  return {{"validation/public.yaml", excerpt(read_source_file("validation/public.yaml"), 6, 1),
           "excerpt: first 6 items of each list"}};
}

}  // namespace scalecast::fuzz
