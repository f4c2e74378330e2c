// ptxbench's TVM-FFI binding: ShapeView, a read-only view of a tensor's shape or strides (element
// counts), indexable like an array: t.shape()[0]. Written for ptxbench from the TVM-FFI documentation.
#ifndef TVM_FFI_CONTAINER_SHAPE_H_
#define TVM_FFI_CONTAINER_SHAPE_H_

#include <tvm/ffi/error.h>

#include <cstddef>
#include <cstdint>

namespace tvm {
namespace ffi {

class ShapeView {
 public:
  ShapeView() = default;
  ShapeView(const int64_t* data, size_t size) : m_data(data), m_size(size) {}
  const int64_t* data() const { return m_data; }
  size_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }
  int64_t operator[](size_t i) const { return m_data[i]; }
  /// Bounds-checked: throws IndexError.
  int64_t at(size_t i) const {
    if (i >= m_size) TVM_FFI_THROW(IndexError) << "index " << i << " out of range for a shape of " << m_size;
    return m_data[i];
  }
  const int64_t* begin() const { return m_data; }
  const int64_t* end() const { return m_data + m_size; }
  int64_t front() const { return at(0); }
  int64_t back() const { return at(m_size - 1); }
  /// The product of the entries (the element count of a shape).
  int64_t Product() const {
    int64_t p = 1;
    for (size_t i = 0; i < m_size; ++i) p *= m_data[i];
    return p;
  }

 private:
  const int64_t* m_data = nullptr;
  size_t m_size = 0;
};

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_CONTAINER_SHAPE_H_
