#pragma once
// Presentation of a validation run: the console table (one row per predict point with signed
// error, skipped points with their reason, anchor residuals, per-system and overall statistics)
// and the JSON form (`points[]` with id/measured/predicted/error_pct, `skipped[]`, `anchors[]`,
// `summary` and `per_system`), which scripts/validation_report.sh turns into REPORT.md.

#include <string>

#include "validation/protocol.hpp"
#include "validation/statistics.hpp"

namespace scalecast::validation {

std::string format_table(const ValidationFile& file, const ValidationRun& run,
                         const RunSummary& summary);

// Deterministic JSON text (stable key order, fixed-precision numbers).
std::string format_json(const ValidationFile& file, const ValidationRun& run,
                        const RunSummary& summary);

// Writes a report to `path`, given on the command line as `option` (--json): a regular file
// atomically (common/atomic_file.hpp), a device or pipe (/dev/stdout, a FIFO) in place. Throws
// common::ConfigError "OPTION: error: PATH: REASON" when it cannot be opened, written or closed.
void write_report_file(const std::string& option, const std::string& path, const std::string& text);

}  // namespace scalecast::validation
