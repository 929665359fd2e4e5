#pragma once
// Golden-file comparison for the replay tests: where an output differs from its stored golden
// file, say where (first differing line, both versions of it, the line counts) so a failure reads
// like a diff instead of a changed hash. The stored files are plain text under
// tests/sim/replay/data/memory-golden/ and change only through scripts/update_input_golden.sh.

#include <sstream>
#include <string>

namespace scalecast::sim::testing {

// "" when equal; otherwise a short report of the first difference.
inline std::string first_difference(const std::string& golden, const std::string& now) {
  if (golden == now) return "";
  std::istringstream g(golden), n(now);
  std::string gl, nl;
  int line = 0;
  while (true) {
    ++line;
    const bool has_g = static_cast<bool>(std::getline(g, gl));
    const bool has_n = static_cast<bool>(std::getline(n, nl));
    if (!has_g && !has_n) break;
    if (!has_g || !has_n || gl != nl) {
      std::ostringstream out;
      out << "first difference at line " << line
          << "\n  golden: " << (has_g ? gl : std::string("<end of file>"))
          << "\n  now:    " << (has_n ? nl : std::string("<end of file>"));
      return out.str();
    }
  }
  // Same lines: only the final newline differs.
  return "files differ only in a trailing newline (golden " + std::to_string(golden.size()) +
         " bytes, now " + std::to_string(now.size()) + ")";
}

}  // namespace scalecast::sim::testing
