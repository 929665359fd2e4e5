#include "tests/fuzz/mutator.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>

#include "common/rng.hpp"

namespace scalecast::fuzz {
namespace {

using common::Rng;

// One place in the tree: the value, its parent, and how the parent holds it.
struct Slot {
  YAML::Node parent;  // invalid for the root
  YAML::Node key;     // map entry: the key node; sequence item: null
  std::size_t index = 0;
  YAML::Node value;
  std::string path;
};

void collect(const YAML::Node& node, const std::string& path, std::vector<Slot>& out, int depth) {
  if (depth > 64) return;
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
      const std::string p = path.empty() ? key : path + "." + key;
      out.push_back({node, it->first, 0, it->second, p});
      collect(it->second, p, out, depth + 1);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string p = fmt::format("{}[{}]", path, i);
      out.push_back({node, YAML::Node(), i, node[i], p});
      collect(node[i], p, out, depth + 1);
    }
  }
}

template <class T>
const T& pick(Rng& rng, const std::vector<T>& v) {
  return v[rng.below(v.size())];
}

// "50GBps" -> ("50", "GBps"); "fp16" -> nullopt (not a number with a unit).
std::optional<std::pair<std::string, std::string>> split_quantity(const std::string& s) {
  static const std::regex re(R"(^\s*([+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(.*)$)");
  std::smatch m;
  if (!std::regex_match(s, m, re)) return std::nullopt;
  return std::make_pair(m[1].str(), m[2].str());
}

std::string huge_string(Rng& rng) {
  switch (rng.below(4)) {
    case 0:
      return std::string(100'000, 'x');
    case 1:
      return std::string(100'000, '9');  // a number no parser can hold
    case 2:
      return "1" + std::string(400, '0') + "GBps";
    default:
      return "0." + std::string(5'000, '0') + "1";
  }
}

std::string extreme_scalar(Rng& rng, const std::string& old) {
  std::string v = pick(rng, extreme_numbers());
  const auto q = split_quantity(old);
  if (q && !q->second.empty() && rng.below(2) == 0) v += q->second;  // keep the unit
  return v;
}

std::string garbled_unit(Rng& rng, const std::string& old) {
  static const std::vector<std::string> kUnits = {"GB",    "GBps", "Gbps", "ms", "us",    "%",
                                                  "FLOPS", "Hz",   "xyz",  "B",  "TFLOPS"};
  const auto q = split_quantity(old);
  const std::string number = q ? q->first : "50";
  const std::string unit = q && !q->second.empty() ? q->second : pick(rng, kUnits);
  switch (rng.below(7)) {
    case 0:
      return number;  // unit removed
    case 1:
      return unit;  // number removed
    case 2:
      return number + pick(rng, kUnits);  // another (often wrong) unit
    case 3:
      return number + " " + unit;  // a space
    case 4:
      return number + unit + unit;  // doubled
    case 5: {                       // case changed
      std::string u = unit;
      for (char& c : u)
        c = static_cast<char>(std::islower(static_cast<unsigned char>(c))
                                  ? std::toupper(static_cast<unsigned char>(c))
                                  : std::tolower(static_cast<unsigned char>(c)));
      return number + u;
    }
    default:
      return "-" + number + unit;  // negative
  }
}

YAML::Node swapped(Rng& rng, const YAML::Node& v) {
  if (v.IsMap()) {
    if (rng.below(2) == 0) return YAML::Node("1");
    YAML::Node seq(YAML::NodeType::Sequence);
    for (auto it = v.begin(); it != v.end(); ++it) seq.push_back(YAML::Clone(it->second));
    return seq;
  }
  if (v.IsSequence()) {
    if (rng.below(2) == 0) return YAML::Node(v.size() > 0 && v[0].IsScalar() ? v[0].Scalar() : "1");
    YAML::Node map(YAML::NodeType::Map);
    for (std::size_t i = 0; i < v.size(); ++i) map[fmt::format("item{}", i)] = YAML::Clone(v[i]);
    return map;
  }
  const std::string s = v.IsScalar() ? v.Scalar() : "";
  if (rng.below(2) == 0) {
    YAML::Node seq(YAML::NodeType::Sequence);
    seq.push_back(s);
    return seq;
  }
  YAML::Node map(YAML::NodeType::Map);
  map["value"] = s;
  return map;
}

// Applies a structural mutation; nullopt when it does not apply (text not YAML, nothing to edit).
std::optional<Mutant> tree_mutation(const std::string& original, Mutation kind, Rng& rng) {
  YAML::Node root;
  try {
    root = YAML::Load(original);
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
  std::vector<Slot> slots;
  collect(root, "", slots, 0);
  if (kind != Mutation::kDeleteKey && kind != Mutation::kSwapType) {
    std::vector<Slot> scalars;
    for (const Slot& s : slots)
      if (s.value.IsScalar()) scalars.push_back(s);
    slots.swap(scalars);
  }
  if (slots.empty()) return std::nullopt;
  Slot s = pick(rng, slots);
  Mutant m;
  m.kind = kind;
  switch (kind) {
    case Mutation::kDeleteKey:
      if (s.key.IsDefined() && !s.key.IsNull()) {
        s.parent.remove(s.key);
      } else {
        YAML::Node seq(YAML::NodeType::Sequence);
        for (std::size_t i = 0; i < s.parent.size(); ++i)
          if (i != s.index) seq.push_back(s.parent[i]);
        s.parent = seq;
      }
      m.description = "delete " + s.path;
      break;
    case Mutation::kSwapType: {
      YAML::Node n = swapped(rng, s.value);
      m.description = "swap the type of " + s.path;
      s.value = n;
      break;
    }
    case Mutation::kExtremeNumber: {
      const std::string v = extreme_scalar(rng, s.value.Scalar());
      m.description = fmt::format("{}: \"{}\" -> \"{}\"", s.path, s.value.Scalar(), v);
      s.value = v;
      break;
    }
    case Mutation::kGarbleUnit: {
      const std::string v = garbled_unit(rng, s.value.Scalar());
      m.description = fmt::format("{}: \"{}\" -> \"{}\"", s.path, s.value.Scalar(), v);
      s.value = v;
      break;
    }
    default: {
      const std::string v = huge_string(rng);
      m.description =
          fmt::format("{}: a {}-character string ({}...)", s.path, v.size(), v.substr(0, 8));
      s.value = v;
      break;
    }
  }
  YAML::Emitter out;
  out << root;
  if (!out.good()) return std::nullopt;
  m.text = std::string(out.c_str()) + "\n";
  return m;
}

std::vector<std::size_t> key_lines(const std::string& text) {
  static const std::regex re(R"(^\s*(- )?[A-Za-z_][A-Za-z0-9_.-]*\s*:.*$)");
  std::vector<std::size_t> starts;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (std::regex_match(text.begin() + static_cast<std::ptrdiff_t>(pos),
                         text.begin() + static_cast<std::ptrdiff_t>(end), re))
      starts.push_back(pos);
    pos = end + 1;
  }
  return starts;
}

Mutant text_mutation(const std::string& original, Mutation kind, Rng& rng) {
  Mutant m;
  m.kind = kind;
  m.text = original;
  std::string& t = m.text;
  if (kind == Mutation::kDuplicateKey || kind == Mutation::kDeepNesting) {
    const std::vector<std::size_t> lines = key_lines(t);
    if (lines.empty())
      kind = Mutation::kByteFlip;
    else {
      const std::size_t start = pick(rng, lines);
      std::size_t end = t.find('\n', start);
      if (end == std::string::npos) end = t.size();
      std::string line = t.substr(start, end - start);
      const std::size_t line_no =
          static_cast<std::size_t>(
              std::count(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(start), '\n')) +
          1;
      if (kind == Mutation::kDuplicateKey) {
        std::string copy = line;
        const std::size_t dash = copy.find("- ");
        if (dash != std::string::npos && copy.find_first_not_of(' ') == dash) copy[dash] = ' ';
        t.insert(end, "\n" + copy);
        m.description = fmt::format("line {} repeated: {}", line_no, line.substr(0, 60));
      } else {
        static const std::vector<std::size_t> kDepths = {64, 1'000, 5'000, 100'000};
        const std::size_t depth = pick(rng, kDepths);
        const bool flow_list = rng.below(2) == 0;
        std::string value;
        if (flow_list)
          value = std::string(depth, '[') + "1" + std::string(depth, ']');
        else {
          value.reserve(depth * 5);
          for (std::size_t i = 0; i < depth; ++i) value += "{a: ";
          value += "1" + std::string(depth, '}');
        }
        const std::size_t colon = line.find(':');
        t.replace(start, end - start, line.substr(0, colon + 1) + " " + value);
        m.description = fmt::format("line {}: value nested {} deep ({})", line_no, depth,
                                    flow_list ? "lists" : "maps");
      }
      return m;
    }
  }
  if (t.empty()) t = " ";
  if (kind == Mutation::kTruncate) {
    const std::size_t at = rng.below(t.size());
    t.resize(at);
    m.description = fmt::format("truncated to {} bytes", at);
    return m;
  }
  m.kind = Mutation::kByteFlip;
  const std::size_t n = 1 + rng.below(8);
  std::string what;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = rng.below(t.size());
    const char b = static_cast<char>(rng.below(256));
    what += fmt::format("{}{}=0x{:02x}", i ? ", " : "", at, static_cast<unsigned char>(b));
    t[at] = b;
  }
  m.description = "bytes " + what;
  return m;
}

}  // namespace

const char* to_string(Mutation m) {
  switch (m) {
    case Mutation::kDeleteKey:
      return "delete-key";
    case Mutation::kSwapType:
      return "swap-type";
    case Mutation::kExtremeNumber:
      return "extreme-number";
    case Mutation::kGarbleUnit:
      return "garble-unit";
    case Mutation::kHugeString:
      return "huge-string";
    case Mutation::kByteFlip:
      return "byte-flip";
    case Mutation::kTruncate:
      return "truncate";
    case Mutation::kDuplicateKey:
      return "duplicate-key";
    case Mutation::kDeepNesting:
      return "deep-nesting";
    default:
      return "?";
  }
}

const std::vector<std::string>& extreme_numbers() {
  static const std::vector<std::string> kValues = {
      "0",          "-1",         "1e300",
      "-1e300",     "nan",        ".nan",
      "inf",        ".inf",       "-.inf",
      "2147483648", "4294967297", "9223372036854775808",
      "-0",         "1e-300",     "4.9e-324",
      "1e308",      "2147483647", "-9223372036854775808",
      "0.0",        "0x7fffffff", "18446744073709551617",
      "1e19",       "-2147483649"};
  return kValues;
}

Mutant mutate(const std::string& original, std::uint64_t seed, std::uint64_t index) {
  Rng rng = Rng(seed).fork(index);
  // Structural mutations are the likelier: they reach the loaders' checks past the parser.
  static const std::vector<Mutation> kDraw = {
      Mutation::kDeleteKey,     Mutation::kDeleteKey,     Mutation::kSwapType,
      Mutation::kSwapType,      Mutation::kExtremeNumber, Mutation::kExtremeNumber,
      Mutation::kExtremeNumber, Mutation::kGarbleUnit,    Mutation::kGarbleUnit,
      Mutation::kHugeString,    Mutation::kByteFlip,      Mutation::kByteFlip,
      Mutation::kTruncate,      Mutation::kDuplicateKey,  Mutation::kDeepNesting};
  const Mutation kind = pick(rng, kDraw);
  switch (kind) {
    case Mutation::kByteFlip:
    case Mutation::kTruncate:
    case Mutation::kDuplicateKey:
    case Mutation::kDeepNesting:
      return text_mutation(original, kind, rng);
    default:
      if (auto m = tree_mutation(original, kind, rng)) return *m;
      return text_mutation(original, Mutation::kByteFlip, rng);
  }
}

}  // namespace scalecast::fuzz
