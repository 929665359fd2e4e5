#pragma once
// A readable summary of a calibration database for `scalecast describe calibration FILE`: the
// provenance records, how many measurements exist per device / precision / op class / pass, and
// the fitted rate curves (points, fit quality, and the achieved rate they predict at a few
// reference sizes) that the cost model's fitted tier will use.

#include <string>

#include "calibration/database.hpp"

namespace scalecast::calibration {

std::string describe_database(const Database& db);

}  // namespace scalecast::calibration
