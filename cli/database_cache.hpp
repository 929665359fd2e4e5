#pragma once
// Calibration databases kept in memory for the life of the process. A plain `scalecast run`
// reads each database once either way; a simulation server (cmd_sim_server.cpp) preloads them so
// that every simulation it forks starts with the parsed databases instead of re-reading hundreds
// of KB of YAML. An entry is used only while its file's size and modification time are unchanged.

#include <string>

#include "calibration/database.hpp"

namespace scalecast::cli {

// The database at `path` as calibration::load_database reads it (same errors), parsed at most
// once per unchanged file. The reference stays valid until the next call for the same path.
const calibration::Database& cached_database(const std::string& path);

}  // namespace scalecast::cli
