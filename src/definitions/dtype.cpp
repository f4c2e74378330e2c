#include "definitions/dtype.h"

namespace ptxbench {
namespace {
struct Entry {
  DType type;
  const char* name;
  std::size_t size;
};
constexpr Entry kTypes[] = {
    {DType::bf16, "bfloat16", 2}, {DType::f16, "float16", 2}, {DType::f32, "float32", 4},
    {DType::i32, "int32", 4},     {DType::i64, "int64", 8},   {DType::f8e4m3, "float8_e4m3fn", 1},
};
const Entry& entry(DType t) {
  for (const auto& e : kTypes)
    if (e.type == t) return e;
  return kTypes[0];
}
}  // namespace

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& e : kTypes)
    if (name == e.name) return e.type;
  return std::nullopt;
}
std::string dtype_name(DType t) { return entry(t).name; }
std::size_t dtype_size(DType t) { return entry(t).size; }

}  // namespace ptxbench
