#pragma once
// Numeric precision, shared by models (what an op computes in), platforms (which peak applies)
// and calibration (how measurements are keyed). A training recipe (Precision) decides the data
// type of each op (DType) and whether matrix ops run on tensor cores.

#include <optional>
#include <string_view>

namespace scalecast::common {

// The training recipe.
enum class Precision {
  kFp32,       // everything fp32, no tensor cores (V100) / no TF32
  kTf32,       // fp32 storage, matrix ops on TF32 tensor cores (A100+)
  kFp16Mixed,  // fp16 activations and matrix ops on tensor cores, fp32 master weights
  kBf16Mixed,  // as fp16 mixed with bf16
};

// The data type an op computes in.
enum class DType { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8 };

std::string_view to_string(Precision p);
std::string_view to_string(DType d);
// Accepts "fp32", "tf32", "fp16" (= mixed), "amp", "mixed", "bf16"; nullopt otherwise.
std::optional<Precision> parse_precision(std::string_view text);
std::optional<DType> parse_dtype(std::string_view text);
// Bytes per element of a dtype (tf32 is stored as fp32).
int dtype_bytes(DType d);

}  // namespace scalecast::common
