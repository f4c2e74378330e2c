#include "definitions/dtype.h"

namespace ptxbench {
namespace {
struct Entry {
  DType type;
  const char* name;
  std::size_t size;
  bool is_float;
};
constexpr Entry kTypes[] = {
    {DType::bf16, "bfloat16", 2, true},     {DType::f16, "float16", 2, true},
    {DType::f32, "float32", 4, true},       {DType::i32, "int32", 4, false},
    {DType::i64, "int64", 8, false},        {DType::f8e4m3, "float8_e4m3fn", 1, true},
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
bool dtype_is_float(DType t) { return entry(t).is_float; }

}  // namespace ptxbench
