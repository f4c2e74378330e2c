// Element types of definitions, with their ABI codes (ptxbench_abi.h) and FlashInfer-Trace names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ptxbench {

/// Values equal the PTXB_* codes of the candidate ABI.
enum class DType : int32_t { bf16 = 0, f16 = 1, f32 = 2, i32 = 3, i64 = 4, f8e4m3 = 5 };

/// Parses "bfloat16", "float16", "float32", "int32", "int64", "float8_e4m3fn".
std::optional<DType> parse_dtype(std::string_view name);
std::string dtype_name(DType t);
std::size_t dtype_size(DType t);

}  // namespace ptxbench
