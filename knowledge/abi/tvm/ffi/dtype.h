// ptxbench's TVM-FFI binding: comparing and printing DLPack element types (DLDataType), so that
// TVM_FFI_ICHECK_EQ(a.dtype(), b.dtype()) compiles and reads well. Written for ptxbench.
#ifndef TVM_FFI_DTYPE_H_
#define TVM_FFI_DTYPE_H_

#include <dlpack/dlpack.h>

#include <ostream>
#include <string>

inline bool operator==(const DLDataType& a, const DLDataType& b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
inline bool operator!=(const DLDataType& a, const DLDataType& b) { return !(a == b); }
inline bool operator==(const DLDevice& a, const DLDevice& b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}
inline bool operator!=(const DLDevice& a, const DLDevice& b) { return !(a == b); }

namespace tvm {
namespace ffi {

/// "bfloat16", "float32", "int64", "float8_e4m3fn", ...; vectors add "x<lanes>".
inline std::string DLDataTypeToString(DLDataType t) {
  std::string base;
  switch (t.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLBfloat: base = "bfloat"; break;
    case kDLComplex: base = "complex"; break;
    case kDLBool: return "bool";
    case kDLFloat8_e4m3fn: return "float8_e4m3fn";
    case kDLFloat8_e5m2: return "float8_e5m2";
    default: base = "code" + std::to_string(t.code) + "_"; break;
  }
  std::string s = base + std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

}  // namespace ffi
}  // namespace tvm

inline std::ostream& operator<<(std::ostream& os, const DLDataType& t) {
  return os << ::tvm::ffi::DLDataTypeToString(t);
}
inline std::ostream& operator<<(std::ostream& os, const DLDevice& d) {
  return os << (d.device_type == kDLCUDA ? "cuda:" : "device") << d.device_id;
}

#endif  // TVM_FFI_DTYPE_H_
