// ptxbench's TVM-FFI binding: tvm::ffi::TensorView, the view of one of the definition's tensors
// that an exported function receives (data pointer, shape, strides in elements, DLPack dtype and
// device). Written for ptxbench from the TVM-FFI documentation.
//
// NOTES: under ptxbench the evaluator owns every tensor and passes views for the length of one
// call; tvm::ffi::Tensor is accepted as a parameter type too, but here it is a view as well (it
// owns nothing and cannot allocate: write into the outputs you are given).
#ifndef TVM_FFI_CONTAINER_TENSOR_H_
#define TVM_FFI_CONTAINER_TENSOR_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>

#include <cstddef>
#include <cstdint>

namespace tvm {
namespace ffi {

/// Bytes of `numel` elements of `dtype` (sub-byte types rounded up).
inline size_t GetDataSize(size_t numel, DLDataType dtype) {
  return (numel * dtype.bits * dtype.lanes + 7) / 8;
}

/// Row-major contiguous: strides are the suffix products of the shape (size-1 dimensions ignored).
inline bool IsContiguous(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  int64_t expected = 1;
  for (int32_t i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] == 1) continue;
    if (t.strides[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

inline bool IsAligned(const DLTensor& t, size_t alignment) {
  return alignment == 0 ||
         (reinterpret_cast<uintptr_t>(static_cast<char*>(t.data) + t.byte_offset) % alignment) == 0;
}

/// A non-owning view of one tensor for the length of the call.
class TensorView {
 public:
  explicit TensorView(const DLTensor* tensor) : m_tensor(tensor) {}
  TensorView(const TensorView&) = default;
  TensorView& operator=(const TensorView&) = default;

  void* data_ptr() const { return m_tensor->data; }
  uint64_t byte_offset() const { return m_tensor->byte_offset; }
  DLDevice device() const { return m_tensor->device; }
  DLDataType dtype() const { return m_tensor->dtype; }
  int32_t ndim() const { return m_tensor->ndim; }
  ShapeView shape() const { return ShapeView(m_tensor->shape, static_cast<size_t>(m_tensor->ndim)); }
  ShapeView strides() const { return ShapeView(m_tensor->strides, static_cast<size_t>(m_tensor->ndim)); }
  /// Size of dimension `idx`; a negative index counts from the end. Throws IndexError.
  int64_t size(int64_t idx) const { return m_tensor->shape[checked(idx)]; }
  /// Stride (elements) of dimension `idx`; a negative index counts from the end. Throws IndexError.
  int64_t stride(int64_t idx) const { return m_tensor->strides[checked(idx)]; }
  int64_t numel() const { return shape().Product(); }
  bool IsContiguous() const { return ::tvm::ffi::IsContiguous(*m_tensor); }
  bool IsAligned(size_t alignment) const { return ::tvm::ffi::IsAligned(*m_tensor, alignment); }
  const DLTensor* GetDLTensorPtr() const { return m_tensor; }
  const DLTensor* operator->() const { return m_tensor; }

 private:
  size_t checked(int64_t idx) const {
    const int64_t n = m_tensor->ndim;
    const int64_t i = idx < 0 ? idx + n : idx;
    if (i < 0 || i >= n) TVM_FFI_THROW(IndexError) << "dimension " << idx << " out of range for a " << n << "-D tensor";
    return static_cast<size_t>(i);
  }
  const DLTensor* m_tensor;
};

/// Accepted as a parameter type of an exported function; a view here as well (see the NOTES above).
class Tensor : public TensorView {
 public:
  explicit Tensor(const DLTensor* tensor) : TensorView(tensor) {}
};

inline size_t GetDataSize(const TensorView& t) { return GetDataSize(static_cast<size_t>(t.numel()), t.dtype()); }

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_CONTAINER_TENSOR_H_
