#include "common/precision.hpp"

namespace scalecast::common {

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp16Mixed:
      return "fp16";
    case Precision::kBf16Mixed:
      return "bf16";
  }
  return "?";
}

std::string_view to_string(DType d) {
  switch (d) {
    case DType::kFp64:
      return "fp64";
    case DType::kFp32:
      return "fp32";
    case DType::kTf32:
      return "tf32";
    case DType::kFp16:
      return "fp16";
    case DType::kBf16:
      return "bf16";
    case DType::kFp8:
      return "fp8";
  }
  return "?";
}

std::optional<Precision> parse_precision(std::string_view t) {
  if (t == "fp32") return Precision::kFp32;
  if (t == "tf32") return Precision::kTf32;
  if (t == "fp16" || t == "amp" || t == "mixed" || t == "fp16_mixed") return Precision::kFp16Mixed;
  if (t == "bf16" || t == "bf16_mixed") return Precision::kBf16Mixed;
  return std::nullopt;
}

std::optional<DType> parse_dtype(std::string_view t) {
  if (t == "fp64") return DType::kFp64;
  if (t == "fp32") return DType::kFp32;
  if (t == "tf32") return DType::kTf32;
  if (t == "fp16") return DType::kFp16;
  if (t == "bf16") return DType::kBf16;
  if (t == "fp8") return DType::kFp8;
  return std::nullopt;
}

int dtype_bytes(DType d) {
  switch (d) {
    case DType::kFp64:
      return 8;
    case DType::kFp32:
    case DType::kTf32:
      return 4;
    case DType::kFp16:
    case DType::kBf16:
      return 2;
    case DType::kFp8:
      return 1;
  }
  return 4;
}

}  // namespace scalecast::common
