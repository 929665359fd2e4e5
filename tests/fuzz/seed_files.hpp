#pragma once
// The shipped input files the fuzz test mutates, grouped by the loader that reads them. Big
// files are cut to excerpts (every k-th list item of each top-level list) so that a mutation
// lands on a checked value often and a case stays fast.

#include <string>
#include <vector>

namespace scalecast::fuzz {

struct SeedFile {
  std::string name;  // path relative to the repository ("platforms/summit.yaml")
  std::string text;
  std::string variant;  // "" for the shipped file, else what was added to reach an optional path
};

// The whole file at `relative` under the source tree.
std::string read_source_file(const std::string& relative);

// Keeps, in each top-level list ("key:" then "  - item" lines), item i when i % stride == 0,
// at most max_items of them; everything outside lists is kept.
std::string excerpt(const std::string& text, int max_items, int stride);

std::vector<SeedFile> scenario_seeds();     // scenarios/*.yaml, plus variants with seq_len
std::vector<SeedFile> platform_seeds();     // platforms/*.yaml except gpus.yaml
std::vector<SeedFile> gpu_catalog_seeds();  // platforms/gpus.yaml
std::vector<SeedFile> model_seeds();        // models/examples/*.yaml
std::vector<SeedFile> calibration_seeds();  // calibration/data/*.yaml, excerpts
std::vector<SeedFile> validation_seeds();   // validation/public.yaml, excerpt

}  // namespace scalecast::fuzz
