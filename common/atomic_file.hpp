#pragma once
// Output files are written whole or not at all: the content goes to "<path>.tmp.<pid>" and is
// renamed over <path> when complete, so an interrupted run never leaves a half-written result
// and never damages the previous one.

#include <functional>
#include <iosfwd>
#include <string>

namespace scalecast::common {

// Writes `content` to `path` atomically; creates missing parent folders. The temporary file is
// created exclusively and never through a symlink. Throws common::ConfigError (exit 1) naming
// the path and the system's reason ("No space left on device") on failure, leaving no
// temporary file and the previous content intact. A device, pipe or socket at `path` (not
// through a symlink) is written in place instead, never replaced by a renamed file.
void write_file_atomic(const std::string& path, const std::string& content);

// Streams into `path` atomically: `fill` writes to the stream, then the file is renamed.
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill);

}  // namespace scalecast::common
