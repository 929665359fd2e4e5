#pragma once
// What `run --out DIR` leaves in DIR, and what the next run into DIR removes first. Before its
// first point starts, a run writes DIR/manifest.txt: the relative path of every file it is
// about to write. The next `run --out DIR` removes the files that manifest lists (and the
// folders they leave empty), then writes its own. So a folder never holds two runs' results
// side by side (a run over nodes [1, 2, 4] and then one over [2] left nodes-1/ and nodes-4/
// next to the new summary.json), an interrupted run's manifest still lists what it started,
// and no file scalecast did not write is touched: a file you put there stays, and so does a
// folder that still holds one. A folder written by a scalecast without manifests is left as
// it is.

#include <string>
#include <vector>

#include "sim/scenario.hpp"

namespace scalecast::cli {

inline constexpr const char* kManifestName = "manifest.txt";

// The relative paths a run of `s` writes into its --out folder, in writing order: per point
// the files of sim::write_point_files (sim::write_llm_point_files for an LLM job), in nodes-N/
// with its point.json for a list of node counts, in jobs/NAME/ for the training jobs of a
// `jobs:` scenario (which adds the merged trace.json), then summary.json and
// scenario.resolved.yaml.
std::vector<std::string> planned_outputs(const sim::Scenario& s);

// Removes the files DIR/manifest.txt lists (a regular file or a symbolic link, never what a
// link points to; a folder in the list is left alone), the folders under DIR that this leaves
// empty, and the manifest. A line that is not a path inside DIR (absolute, empty, with . or ..
// parts) is a common::ConfigError at manifest.txt:LINE, before anything is removed. Without a
// manifest nothing is removed.
void remove_previous_outputs(const std::string& dir);

// Writes DIR/manifest.txt (atomically): a comment saying what it is, then one path per line.
void write_manifest(const std::string& dir, const std::vector<std::string>& files);

}  // namespace scalecast::cli
