#pragma once
// The documented schema of platform files: every key with its unit, default and meaning, in
// one table that `scalecast describe platform --schema` prints and platforms/README.md mirrors
// (a test checks that the README lists every key).

#include <string>
#include <string_view>
#include <vector>

namespace scalecast::platforms {

struct SchemaField {
  std::string_view key;       // dotted path; NAME stands for a user-chosen map key, [] for a list
  std::string_view unit;      // "bandwidth", "time", "count", "text", ...
  std::string_view fallback;  // default ("required" when there is none)
  std::string_view meaning;
};

const std::vector<SchemaField>& platform_schema();
const std::vector<SchemaField>& gpu_catalog_schema();

// Both tables as aligned text.
std::string format_schema();

}  // namespace scalecast::platforms
