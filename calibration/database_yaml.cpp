// Reading and writing the calibration database file (format in calibration/README.md). Reading
// goes through common::ConfigNode so every problem is reported as file:line:col plus key path.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include "calibration/database.hpp"
#include "common/atomic_file.hpp"
#include "common/config_node.hpp"
#include "common/input_file.hpp"
#include "common/units.hpp"
#include "platforms/data_dir.hpp"
#include "platforms/gpu_catalog.hpp"

namespace scalecast::calibration {
namespace {

using common::ConfigNode;

constexpr const char* kFormat = "scalecast-calibration";

std::map<std::string, std::string> string_map(const ConfigNode& node) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : node.entries()) out[k] = v.as_string();
  return out;
}

// "YYYY-MM-DD" or "YYYY-MM-DDThh:mm:ssZ", a real calendar day: merges order sources by comparing
// their dates as text, which only ISO dates of one form make chronological.
bool is_iso_date(const std::string& s) {
  const auto digits = [&](std::size_t at, std::size_t n, int& out) {
    out = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (i >= s.size() || s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (s.size() != 10 && s.size() != 20) return false;
  if (!digits(0, 4, year) || s[4] != '-' || !digits(5, 2, month) || s[7] != '-' ||
      !digits(8, 2, day))
    return false;
  if (month < 1 || month > 12 || day < 1) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return false;
  if (s.size() == 10) return true;
  return s[10] == 'T' && digits(11, 2, hour) && s[13] == ':' && digits(14, 2, minute) &&
         s[16] == ':' && digits(17, 2, second) && s[19] == 'Z' && hour < 24 && minute < 60 &&
         second < 61;
}

// "a, b or c".
std::string one_of(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i)
    out += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return out;
}

Source read_source(const ConfigNode& n) {
  n.check_keys({"id", "device", "device_name", "backend", "driver", "libraries", "properties",
                "date", "command", "timing"});
  Source s;
  s.id = n.required("id").as_string();
  s.device = n.required("device").as_string();
  s.device_name = n.string_or("device_name", "");
  const ConfigNode backend = n.required("backend");
  s.backend = backend.as_string();
  if (s.backend != "cuda" && s.backend != "cpu" && s.backend != "published")
    backend.fail(fmt::format("expected cuda, cpu or published, got \"{}\"", s.backend));
  s.driver = n.string_or("driver", "");
  if (auto l = n.optional("libraries")) s.libraries = string_map(*l);
  if (auto p = n.optional("properties")) s.properties = string_map(*p);
  const ConfigNode date = n.required("date");
  s.date = date.as_string();
  if (!is_iso_date(s.date))
    date.fail(
        fmt::format("expected an ISO 8601 date YYYY-MM-DD, optionally with a UTC time "
                    "(YYYY-MM-DDThh:mm:ssZ, as calibrate writes), got \"{}\"",
                    s.date));
  s.command = n.string_or("command", "");
  s.timing = n.string_or("timing", "");
  return s;
}

// A kernel time: from 1 ns (about one GPU clock; CUDA events resolve 0.5 us) to 1 hour. Smaller
// values are unit slips that would give rates beyond any device (and overflow the fits).
double positive_seconds(const ConfigNode& n) {
  const double v = n.as_double();
  if (!(v >= 1e-9 && v <= 3600.0))
    n.fail(fmt::format("expected a time in seconds from 1e-09 to 3600, got \"{}\"", n.as_string()));
  return v;
}

Measurement read_entry(const ConfigNode& n, const Database& db) {
  n.check_keys({"source", "device", "op", "pass", "dtype", "tc", "select", "dims", "median_s",
                "min_s", "samples", "reps", "algo", "math", "workspace_bytes", "bytes_moved",
                "note"});
  Measurement m;
  const ConfigNode src = n.required("source");
  m.source = src.as_string();
  const Source* source = db.source(m.source);
  if (!source) src.fail(fmt::format("no source with id \"{}\" in sources", m.source));
  const ConfigNode dev = n.required("device");
  m.key.device = dev.as_string();
  if (m.key.device != source->device)
    dev.fail(fmt::format("device \"{}\" differs from its source's device \"{}\"", m.key.device,
                         source->device));
  const ConfigNode op = n.required("op");
  m.key.op = op.as_string();
  const auto& ops = op_names();
  if (std::find(ops.begin(), ops.end(), m.key.op) == ops.end()) {
    const std::string hint = common::closest_match(m.key.op, ops);
    op.fail(hint.empty()
                ? fmt::format("unknown op class \"{}\"", m.key.op)
                : fmt::format("unknown op class \"{}\" (did you mean \"{}\"?)", m.key.op, hint));
  }
  const ConfigNode pass = n.required("pass");
  m.key.pass = pass.as_string();
  const auto& passes = known_passes(m.key.op);
  if (std::find(passes.begin(), passes.end(), m.key.pass) == passes.end())
    pass.fail(
        fmt::format("expected {} for op {}, got \"{}\"", one_of(passes), m.key.op, m.key.pass));
  const ConfigNode dt = n.required("dtype");
  const auto dtype = common::parse_dtype(dt.as_string());
  if (!dtype)
    dt.fail(
        fmt::format("expected fp64, fp32, tf32, fp16, bf16 or fp8, got \"{}\"", dt.as_string()));
  m.key.dtype = *dtype;
  m.key.tensor_core = n.bool_or("tc", false);
  const ConfigNode sel = n.required("select");
  m.key.selection = sel.as_string();
  if (m.key.selection != "find" && m.key.selection != "heuristic" && m.key.selection != "fixed")
    sel.fail(fmt::format("expected find, heuristic or fixed, got \"{}\"", m.key.selection));
  const ConfigNode dims = n.required("dims");
  // Dimensions up to 1e9: FLOP and byte counts built from them stay exact in a double.
  // Padding may be 0 and a transpose is a flag; every other dimension (sizes, strides, groups,
  // ranks, nodes) is at least 1: a 0 gave a zero-FLOP row the fits silently left out.
  const auto& names = known_dims(m.key.op);
  for (const auto& [name, v] : dims.entries()) {
    if (std::find(names.begin(), names.end(), name) == names.end())
      v.fail(fmt::format("unknown dimension '{}' for op {} (expected one of: {})", name, m.key.op,
                         fmt::join(names, ", ")));
    if (m.key.dims.count(name)) v.fail("duplicate key");
    if (name == "trans_a" || name == "trans_b") {
      const std::int64_t flag = v.as_int();
      if (flag != 0 && flag != 1)
        v.fail(fmt::format("expected 0 or 1 (a transpose flag), got {}", v.as_string()));
      m.key.dims[name] = flag;
    } else {
      m.key.dims[name] = v.as_int_in(name == "pad_h" || name == "pad_w" ? 0 : 1, 1'000'000'000);
    }
  }
  for (const auto& need : required_dims(m.key.op))
    if (!m.key.dims.count(need))
      dims.fail(fmt::format("missing dimension '{}' for op {}", need, m.key.op));
  m.median_s = positive_seconds(n.required("median_s"));
  m.min_s = n.has("min_s") ? positive_seconds(n.required("min_s")) : m.median_s;
  if (m.min_s > m.median_s * (1 + 1e-12))
    n.required("min_s").fail(fmt::format("min_s {} exceeds median_s {}", m.min_s, m.median_s));
  m.samples = n.int_field_or("samples", 1, 1'000'000'000, 1);
  m.reps = n.int_field_or("reps", 1, 1'000'000'000, 1);
  m.algorithm = n.string_or("algo", "");
  m.math = n.string_or("math", "");
  m.workspace_bytes = n.count_or("workspace_bytes", 0);
  // Absent (or 0) when unknown; a negative count is a slip, not "unknown".
  if (const auto bytes = n.optional("bytes_moved")) {
    m.bytes_moved = bytes->as_double();
    if (m.bytes_moved < 0)
      bytes->fail(fmt::format("expected a byte count >= 0 (leave the key out when unknown), got {}",
                              bytes->as_string()));
  }
  m.note = n.string_or("note", "");
  return m;
}

// Margins of the physical-rate check over the catalog's datasheet figures. GEMMs: boost clocks
// above the datasheet's. Convolutions: FLOPs are counted as a direct convolution, which Winograd
// and FFT kernels beat (DeepBench V100 reaches 2.5x the fp32 peak; F(6x6,3x3) Winograd does 5x
// fewer multiplications). Bytes: a kernel timed in a loop finds small operands in L2, whose
// bandwidth is up to about 5x the memory's (A100).
constexpr double kGemmPeakMargin = 1.25;
constexpr double kConvPeakMargin = 8.0;
constexpr double kBandwidthMargin = 8.0;

// The fastest dense arithmetic `gpu` has for `dtype`, whatever the row's tc flag says (cuBLAS may
// run fp32 on TF32 tensor cores): FP64 tensor cores (A100, H100) run at twice the vector rate the
// catalog lists.
double best_peak(const platforms::GpuSpec& gpu, common::DType dtype) {
  double peak = std::max(gpu.peak_flops(dtype, true), gpu.peak_flops(dtype, false));
  if (dtype == common::DType::kFp32)
    peak = std::max(peak, gpu.peak_flops(common::DType::kTf32, true));
  if (dtype == common::DType::kFp64) peak *= 2;
  return peak;
}

// A measured time that implies a rate beyond the GPU (FLOPs or bytes per second above its peak
// with the margins above) is a unit slip or a broken timer; its fitted curves printed rates a
// million times the peak. Refused at the row's median_s.
void check_physical_rate(const Measurement& m, const platforms::GpuSpec& gpu,
                         const ConfigNode& median) {
  using common::format_quantity;
  using common::Quantity;
  const MeasurementKey& k = m.key;
  if (is_compute_op(k.op)) {
    const double peak = best_peak(gpu, k.dtype);
    const double margin = k.op == "conv" ? kConvPeakMargin : kGemmPeakMargin;
    const double rate = key_flops(k) / m.median_s;
    if (peak > 0 && rate > margin * peak)
      median.fail(fmt::format(
          "{:g} s for {:g} FLOP is {}, above {:g} x the {} peak of {} ({}): no {} runs faster "
          "than its GPU (a time in the wrong unit?)",
          m.median_s, key_flops(k), format_quantity(rate, Quantity::kFlopRate), margin,
          common::to_string(k.dtype), format_quantity(peak, Quantity::kFlopRate), gpu.name, k.op));
  }
  // Collectives and file reads move their bytes over links and storage, not this GPU's memory.
  if (k.op == "collective" || k.op == "file_read" || !(gpu.memory_bandwidth > 0)) return;
  const double bytes = key_min_bytes(k);
  const double rate = bytes / m.median_s;
  if (rate > kBandwidthMargin * gpu.memory_bandwidth)
    median.fail(fmt::format(
        "{:g} s for at least {:g} bytes is {}, above {:g} x the memory bandwidth of {} ({}): no "
        "{} moves its bytes that fast (a time in the wrong unit?)",
        m.median_s, bytes, format_quantity(rate, Quantity::kBandwidth), kBandwidthMargin,
        format_quantity(gpu.memory_bandwidth, Quantity::kBandwidth), gpu.name, k.op));
}

// The default GPU catalog (platforms/gpus.yaml in the data directories), for the rate check;
// none when it is not found (rows are then not checked).
std::optional<platforms::GpuCatalog> default_gpu_catalog() {
  const std::string path = platforms::find_data_file("platforms/gpus.yaml");
  if (path.empty()) return std::nullopt;
  return platforms::GpuCatalog::load_file(path);
}

// YAML double-quoted scalar.
std::string q(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string flow_map(const std::map<std::string, std::string>& m) {
  std::string s = "{";
  for (const auto& [k, v] : m) s += fmt::format("{}{}: {}", s.size() > 1 ? ", " : "", q(k), q(v));
  return s + "}";
}

}  // namespace

Database parse_database(const std::string& text, const std::string& display_name) {
  const ConfigNode root = ConfigNode::load_string(text, display_name);
  if (!root.is_map())
    root.fail("expected a calibration database (a map with format: " + std::string(kFormat) + ")");
  root.check_keys({"format", "version", "sources", "entries"});
  const ConfigNode format = root.required("format");
  if (format.as_string() != kFormat)
    format.fail(fmt::format("expected \"{}\", got \"{}\"", kFormat, format.as_string()));
  const ConfigNode version = root.required("version");
  if (version.as_int() != kDatabaseVersion)
    version.fail(fmt::format("unsupported version {} (this build reads version {})",
                             version.as_int(), kDatabaseVersion));
  Database db;
  if (auto sources = root.optional("sources"); sources && !sources->is_null()) {
    for (const auto& s : sources->items()) {
      const Source src = read_source(s);
      if (db.source(src.id))
        s.required("id").fail(fmt::format("duplicate source id \"{}\"", src.id));
      db.add_source(src);
    }
  }
  if (auto entries = root.optional("entries"); entries && !entries->is_null()) {
    // Rows of a GPU the default catalog knows are checked against its peaks; other devices (a
    // CPU, a GPU of a platform's own catalog) are not.
    const auto items = entries->items();
    const std::optional<platforms::GpuCatalog> catalog =
        items.empty() ? std::nullopt : default_gpu_catalog();
    for (const auto& e : items) {
      const Measurement m = read_entry(e, db);
      if (catalog && catalog->contains(m.key.device))
        check_physical_rate(m, catalog->at(m.key.device), e.required("median_s"));
      if (db.contains(m.key)) e.fail(fmt::format("duplicate measurement of {}", m.key.signature()));
      db.put(m);
    }
  }
  return db;
}

Database load_database(const std::string& path) {
  return parse_database(common::read_input_file(path, common::kYamlMaxBytes), path);
}

std::string to_yaml(const Database& db) {
  std::string out = fmt::format(
      "# scalecast calibration database (format: calibration/README.md)\nformat: {}\nversion: "
      "{}\nsources:\n",
      kFormat, kDatabaseVersion);
  if (db.sources().empty()) out.pop_back(), out += " []\n";
  for (const auto& [id, s] : db.sources()) {
    out += fmt::format("  - id: {}\n    device: {}\n    device_name: {}\n    backend: {}\n", q(id),
                       q(s.device), q(s.device_name), q(s.backend));
    out += fmt::format("    driver: {}\n    libraries: {}\n    properties: {}\n", q(s.driver),
                       flow_map(s.libraries), flow_map(s.properties));
    out += fmt::format("    date: {}\n    command: {}\n    timing: {}\n", q(s.date), q(s.command),
                       q(s.timing));
  }
  out += "entries:";
  const auto rows = db.measurements();
  out += rows.empty() ? " []\n" : "\n";
  for (const Measurement* m : rows) {
    const auto& k = m->key;
    std::string dims = "{";
    for (const auto& [name, v] : k.dims)
      dims += fmt::format("{}{}: {}", dims.size() > 1 ? ", " : "", name, v);
    dims += "}";
    out += fmt::format(
        "  - {{source: {}, device: {}, op: {}, pass: {}, dtype: {}, tc: {}, select: {}, dims: {}, "
        "median_s: {}, min_s: {}, samples: {}, reps: {}",
        q(m->source), q(k.device), k.op, q(k.pass), common::to_string(k.dtype),
        k.tensor_core ? "true" : "false", k.selection, dims, m->median_s, m->min_s, m->samples,
        m->reps);
    if (!m->algorithm.empty()) out += fmt::format(", algo: {}", q(m->algorithm));
    if (!m->math.empty()) out += fmt::format(", math: {}", q(m->math));
    if (m->workspace_bytes) out += fmt::format(", workspace_bytes: {}", m->workspace_bytes);
    if (m->bytes_moved > 0) out += fmt::format(", bytes_moved: {}", m->bytes_moved);
    if (!m->note.empty()) out += fmt::format(", note: {}", q(m->note));
    out += "}\n";
  }
  return out;
}

void save_database(const Database& db, const std::string& path) {
  common::write_file_atomic(path, to_yaml(db));
}

}  // namespace scalecast::calibration
