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

}  // namespace scalecast::validation
