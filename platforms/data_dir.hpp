#pragma once
// Where scalecast finds its data files (platforms/NAME.yaml, platforms/gpus.yaml) when a user
// names one without a path. The search order is: $SCALECAST_DATA_DIR, the current directory,
// then the source directory compiled into the build; the first that holds the file wins. So the
// tool works from the repository root, from anywhere in a build tree, and when relocated with
// SCALECAST_DATA_DIR set.

#include <string>
#include <vector>

namespace scalecast::platforms {

// The directories searched, in order (existing or not).
std::vector<std::string> data_dirs();

// `relative` (e.g. "platforms/summit.yaml") under the first data dir that has it; empty when
// none does.
std::string find_data_file(const std::string& relative);

// True when a reference names a file rather than a bare name: it holds a '/' or ends in
// .yaml/.yml.
bool looks_like_path(const std::string& ref);

// A file another file refers to (a scenario's platform, model or calibration database): as given
// when absolute or present from the working directory, else next to `referring_file`, else in
// the data dirs; unchanged when none has it (the loader then reports it missing). So a scenario
// runs from any directory.
std::string resolve_reference(const std::string& ref, const std::string& referring_file);

}  // namespace scalecast::platforms
