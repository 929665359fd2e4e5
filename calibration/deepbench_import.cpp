#include "calibration/deepbench_import.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "common/config_error.hpp"
#include "common/config_node.hpp"

namespace scalecast::calibration {
namespace {

struct Csv {
  std::string name;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int> lines;  // 1-based line of each row
};

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

Csv parse_csv(const std::string& text, const std::string& name,
              const std::vector<std::string>& required) {
  Csv csv;
  csv.name = name;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (csv.header.empty()) {
      csv.header = split(line);
      for (const auto& col : required)
        if (std::find(csv.header.begin(), csv.header.end(), col) == csv.header.end())
          throw common::ConfigError(name, line_no, 1, "header",
                                    fmt::format("missing column '{}'", col));
      continue;
    }
    auto cells = split(line);
    if (cells.size() != csv.header.size())
      throw common::ConfigError(
          name, line_no, 1, "",
          fmt::format("expected {} columns, got {}", csv.header.size(), cells.size()));
    csv.rows.push_back(std::move(cells));
    csv.lines.push_back(line_no);
  }
  if (csv.header.empty()) throw common::ConfigError(name, 0, 0, "", "empty file");
  return csv;
}

// The times a database entry may hold (calibration/database_yaml.cpp reads 1 ns to 1 h).
constexpr double kMinTime_s = 1e-9;
constexpr double kMaxTime_s = 3600.0;

class Row {
 public:
  Row(const Csv& csv, std::size_t i) : csv_(csv), i_(i) {}
  const std::string& text(const std::string& col) const { return csv_.rows[i_][index(col)]; }
  // A whole number of at least `least` (1 for a size, 0 for a padding).
  std::int64_t count(const std::string& col, std::int64_t least = 1) const {
    const std::string& t = text(col);
    std::int64_t v = -1;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size() || v < least)
      fail(col, fmt::format("expected a whole number of at least {}, got \"{}\"", least, t));
    return v;
  }
  // Milliseconds → seconds; nullopt for an empty cell (not measured).
  std::optional<double> ms(const std::string& col) const {
    const std::string& t = text(col);
    if (t.empty()) return std::nullopt;
    try {
      std::size_t used = 0;
      const double v = std::stod(t, &used);
      // What a database entry may hold (1 ns to 1 h): 1e-300 ms was written and the file then
      // refused by every reader.
      if (used != t.size() || !(v * 1e-3 >= kMinTime_s && v * 1e-3 <= kMaxTime_s))
        throw std::invalid_argument("");
      return v * 1e-3;
    } catch (const std::exception&) {
      fail(col, fmt::format("expected a time in ms from {:g} to {:g}, got \"{}\"", kMinTime_s * 1e3,
                            kMaxTime_s * 1e3, t));
    }
  }
  [[noreturn]] void fail(const std::string& col, const std::string& msg) const {
    int column = 1;
    for (std::size_t c = 0; c < index(col); ++c)
      column += static_cast<int>(csv_.rows[i_][c].size()) + 1;
    throw common::ConfigError(csv_.name, csv_.lines[i_], column, col, msg);
  }

 private:
  std::size_t index(const std::string& col) const {
    return static_cast<std::size_t>(std::find(csv_.header.begin(), csv_.header.end(), col) -
                                    csv_.header.begin());
  }
  const Csv& csv_;
  std::size_t i_;
};

// DeepBench precision labels: fp32; mixed_fp16 = fp16 inputs, fp32 accumulate, tensor cores;
// pseudo_fp16 (P100) = fp16 storage with fp32 math (calibration/data/deepbench/README.md).
void set_precision(const Row& row, MeasurementKey& key) {
  const std::string& p = row.text("precision");
  if (p == "fp32") {
    key.dtype = common::DType::kFp32;
    key.tensor_core = false;
  } else if (p == "mixed_fp16") {
    key.dtype = common::DType::kFp16;
    key.tensor_core = true;
  } else if (p == "pseudo_fp16") {
    key.dtype = common::DType::kFp16;
    key.tensor_core = false;
  } else {
    row.fail("precision", fmt::format("expected fp32, mixed_fp16 or pseudo_fp16, got \"{}\"", p));
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw common::ConfigError(path, 0, 0, "", "cannot open DeepBench table");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Known damage in the converted sheet: a truncated algorithm name.
std::string algorithm_name(const std::string& a) {
  return a == "LICIT_PRECOMP_GEMM" ? "IMPLICIT_PRECOMP_GEMM" : a;
}

Source deepbench_source(const std::string& device) {
  Source s;
  s.device = device;
  s.backend = "published";
  s.command = "DeepBench code/nvidia/{conv,gemm}_bench (baidu-research/DeepBench)";
  s.timing =
      "one warm-up call, then the mean of 300 (conv) or 400 (GEMM) back-to-back calls; conv "
      "algorithms by cudnnFind; mixed-precision conv channels padded to multiples of 8";
  if (device == "v100-sxm2") {
    // calibration/data/deepbench/README.md: DGX-1, CUDA 10.1.243, cuDNN 7.6.2, driver 418.67.
    s.id = "deepbench-v100";
    s.device_name = "Tesla V100-SXM2 (DGX-1)";
    s.driver = "418.67";
    s.libraries = {{"cuda", "10.1.243"}, {"cudnn", "7.6.2"}};
    s.date = "2019-09-01";  // results/train/DeepBench_NV_V100.xlsx (cuDNN 7.6.2 era)
  } else {
    // The P100 sheet states no versions; the README only gives its origin.
    s.id = "deepbench-p100";
    s.device_name = "Tesla P100-SXM2";
    s.date = "2017-06-01";  // DeepBench_NV_P100.xlsx, earlier release [unconfirmed date]
  }
  return s;
}

}  // namespace

const std::vector<std::string>& deepbench_devices() {
  static const std::vector<std::string> d{"p100-sxm2", "v100-sxm2"};
  return d;
}

void import_deepbench_conv(const std::string& text, const std::string& name,
                           const std::string& device, const std::string& source, Database& db) {
  const Csv csv =
      parse_csv(text, name,
                {"precision", "w", "h", "c", "n", "k", "s", "r", "pad_w", "pad_h", "stride_w",
                 "stride_h", "fwd_ms", "bwd_data_ms", "bwd_filter_ms", "fwd_algorithm"});
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    const Row row(csv, i);
    MeasurementKey key;
    key.device = device;
    key.op = "conv";
    key.selection = "find";
    set_precision(row, key);
    for (const char* d :
         {"n", "c", "h", "w", "k", "r", "s", "pad_h", "pad_w", "stride_h", "stride_w"})
      key.dims[d] = row.count(d, d[0] == 'p' ? 0 : 1);
    const std::pair<const char*, const char*> passes[] = {
        {"fwd", "fwd_ms"}, {"bwd_data", "bwd_data_ms"}, {"bwd_filter", "bwd_filter_ms"}};
    for (const auto& [pass, col] : passes) {
      const auto t = row.ms(col);
      if (!t) continue;  // input layers have no backward-data
      key.pass = pass;
      if (db.contains(key)) continue;  // the sheet lists some shapes under two workloads
      Measurement m;
      m.key = key;
      m.median_s = m.min_s = *t;
      m.reps = 300;
      if (key.pass == "fwd") m.algorithm = algorithm_name(row.text("fwd_algorithm"));
      m.math = key.tensor_core ? "tensor_op" : "";
      m.source = source;
      m.note = "mean of 300 calls (DeepBench); min not published";
      db.put(m);
    }
  }
}

void import_deepbench_gemm(const std::string& text, const std::string& name,
                           const std::string& device, const std::string& source, Database& db) {
  const Csv csv =
      parse_csv(text, name, {"precision", "m", "n", "k", "a_transpose", "b_transpose", "time_ms"});
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    const Row row(csv, i);
    MeasurementKey key;
    key.device = device;
    key.op = "gemm";
    key.pass = "any";
    key.selection = "find";
    set_precision(row, key);
    for (const char* d : {"m", "n", "k"}) key.dims[d] = row.count(d);
    for (const auto& [col, dim] :
         {std::pair{"a_transpose", "trans_a"}, {"b_transpose", "trans_b"}}) {
      const std::string& t = row.text(col);
      if (t != "N" && t != "T") row.fail(col, fmt::format("expected N or T, got \"{}\"", t));
      key.dims[dim] = t == "T" ? 1 : 0;
    }
    const auto t = row.ms("time_ms");  // checked before a repeated shape is skipped
    if (!t) row.fail("time_ms", "expected a time in ms, got \"\"");
    if (db.contains(key)) continue;
    Measurement m;
    m.key = key;
    m.median_s = m.min_s = *t;
    m.reps = 400;
    m.algorithm = key.tensor_core ? "cublasGemmEx(DFALT_TENSOR_OP)" : "cublasSgemm";
    m.math = key.tensor_core ? "tensor_op" : "";
    m.source = source;
    m.note = "mean of 400 calls (DeepBench); min not published";
    db.put(m);
  }
}

void require_deepbench_device(const std::string& device) {
  const auto& known = deepbench_devices();
  if (std::find(known.begin(), known.end(), device) == known.end())
    throw std::invalid_argument(fmt::format("no published DeepBench table for '{}' (known: {})",
                                            device, fmt::join(known, ", ")));
}

Database import_deepbench(const std::string& device, const std::string& conv_csv_path,
                          const std::string& gemm_csv_path) {
  require_deepbench_device(device);
  Database db;
  const Source src = deepbench_source(device);
  db.add_source(src);
  import_deepbench_conv(read_text(conv_csv_path), conv_csv_path, device, src.id, db);
  import_deepbench_gemm(read_text(gemm_csv_path), gemm_csv_path, device, src.id, db);
  return db;
}

}  // namespace scalecast::calibration
