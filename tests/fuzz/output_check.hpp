#pragma once
// The output half of the command-line property: after exit 0, no result file may hold a NaN, an
// infinity or a null duration (a non-finite double becomes `nan`/`inf` in CSV and `null` in JSON).

#include <filesystem>
#include <string>

namespace scalecast::fuzz {

// The first bad value in `text` ("line 12: ...nan..."), or "" when there is none. JSON: nan/inf
// (any case, signed) outside strings, and null as the value of a key that is a duration or a
// time ("dur", "ts", "..._s", "..._ms"). CSV: a nan/inf field in a column that holds finite
// numbers in other rows (so a layer named "inf" is no finding).
std::string bad_value(const std::string& text, bool csv);

// bad_value() over every .json and .csv file under `dir`, with the file named; "" when all clean.
std::string bad_output(const std::filesystem::path& dir);

}  // namespace scalecast::fuzz
