#pragma once
// Importer for Baidu DeepBench's published training results (V100 and P100, converted to CSV in
// calibration/data/deepbench/, provenance in its README): each conv row becomes up to three
// measurements (fwd, bwd_data, bwd_filter), each GEMM row one, all under a "published" source
// that records the conditions (DGX-1, CUDA, cuDNN and driver versions, DeepBench's timing loop).
// The converted databases are committed in calibration/data/ as well, so a run needs no import.

#include <string>
#include <vector>

#include "calibration/database.hpp"

namespace scalecast::calibration {

// Catalog keys DeepBench has published tables for: "p100-sxm2", "v100-sxm2".
const std::vector<std::string>& deepbench_devices();

// Throws std::invalid_argument "no published DeepBench table for 'X' (known: ...)" unless
// `device` is one of deepbench_devices().
void require_deepbench_device(const std::string& device);

// Imports one device's conv and GEMM CSVs. Throws std::invalid_argument for a device without a
// published table and common::ConfigError (file:line:col, column name) for a malformed CSV.
Database import_deepbench(const std::string& device, const std::string& conv_csv_path,
                          const std::string& gemm_csv_path);

// Parsers on CSV text, `name` standing for the file in errors; rows go into `db` under `source`.
void import_deepbench_conv(const std::string& text, const std::string& name,
                           const std::string& device, const std::string& source, Database& db);
void import_deepbench_gemm(const std::string& text, const std::string& name,
                           const std::string& device, const std::string& source, Database& db);

}  // namespace scalecast::calibration
