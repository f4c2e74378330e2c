// ptxbench's TVM-FFI binding: errors (tvm::ffi::Error) and the check macros TVM-FFI kernels use
// (TVM_FFI_THROW, TVM_FFI_CHECK, TVM_FFI_ICHECK and its comparisons), written for ptxbench from the
// TVM-FFI documentation. An error thrown in an exported function ends the call: ptxb_run
// (tvm/ffi/function.h) returns a nonzero code and the error's text becomes the verdict's message.
#ifndef TVM_FFI_ERROR_H_
#define TVM_FFI_ERROR_H_

#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>
#include <utility>

namespace tvm {
namespace ffi {

/// An error with a kind ("ValueError", "RuntimeError", "InternalError", ...) and a message.
class Error : public std::exception {
 public:
  Error(std::string kind, std::string message, std::string where = std::string())
      : m_kind(std::move(kind)), m_message(std::move(message)) {
    m_what = m_kind + ": " + m_message;
    if (!where.empty()) m_what += " [" + where + "]";
  }
  const std::string& kind() const noexcept { return m_kind; }
  const std::string& message() const noexcept { return m_message; }
  /// "Kind: message [file:line]"
  const char* what() const noexcept override { return m_what.c_str(); }

 private:
  std::string m_kind, m_message, m_what;
};

namespace details {

/// Collects `<<` pieces and throws the Error when the statement ends (its destructor runs at the
/// end of the full expression). NOTES: throwing from a destructor is deliberate, as in TVM-FFI.
class ErrorBuilder {
 public:
  ErrorBuilder(const char* kind, const char* file, int line, bool log = false)
      : m_kind(kind), m_file(file), m_line(line), m_log(log) {}
  ErrorBuilder(const ErrorBuilder&) = delete;
  ErrorBuilder& operator=(const ErrorBuilder&) = delete;
  ~ErrorBuilder() noexcept(false) {
    // The file's name without the build folder (a temporary path that means nothing to a reader).
    const char* slash = std::strrchr(m_file, '/');
    std::string where = std::string(slash ? slash + 1 : m_file) + ":" + std::to_string(m_line);
    Error error(m_kind, m_stream.str(), where);
    if (m_log) std::fprintf(stderr, "%s\n", error.what());
    throw error;
  }
  std::ostringstream& stream() { return m_stream; }

 private:
  const char* m_kind;
  const char* m_file;
  int m_line;
  bool m_log;
  std::ostringstream m_stream;
};

}  // namespace details
}  // namespace ffi
}  // namespace tvm

/// Throws tvm::ffi::Error of kind ErrorKind: TVM_FFI_THROW(ValueError) << "expected 2-D, got " << n;
#define TVM_FFI_THROW(ErrorKind) ::tvm::ffi::details::ErrorBuilder(#ErrorKind, __FILE__, __LINE__).stream()
/// The same, also printed on stderr first.
#define TVM_FFI_LOG_AND_THROW(ErrorKind) \
  ::tvm::ffi::details::ErrorBuilder(#ErrorKind, __FILE__, __LINE__, true).stream()

/// Throws ErrorKind unless `cond` holds: TVM_FFI_CHECK(x.ndim() == 2, ValueError) << "x must be 2-D";
#define TVM_FFI_CHECK(cond, ErrorKind) \
  if (cond) {                          \
  } else                               \
    TVM_FFI_THROW(ErrorKind) << "Check failed: (" #cond ") is false: "

/// Internal checks (InternalError): TVM_FFI_ICHECK(p != nullptr) << "no buffer";
#define TVM_FFI_ICHECK(cond) TVM_FFI_CHECK(cond, InternalError)

// The comparisons print both operands on failure (each is evaluated again then).
#define TVM_FFI_ICHECK_BINARY_OP_(op, x, y)                                                      \
  if ((x)op(y)) {                                                                                \
  } else                                                                                         \
    TVM_FFI_THROW(InternalError) << "Check failed: " #x " " #op " " #y " (" << (x) << " vs. " << (y) \
                                 << "): "
#define TVM_FFI_ICHECK_EQ(x, y) TVM_FFI_ICHECK_BINARY_OP_(==, x, y)
#define TVM_FFI_ICHECK_NE(x, y) TVM_FFI_ICHECK_BINARY_OP_(!=, x, y)
#define TVM_FFI_ICHECK_LT(x, y) TVM_FFI_ICHECK_BINARY_OP_(<, x, y)
#define TVM_FFI_ICHECK_LE(x, y) TVM_FFI_ICHECK_BINARY_OP_(<=, x, y)
#define TVM_FFI_ICHECK_GT(x, y) TVM_FFI_ICHECK_BINARY_OP_(>, x, y)
#define TVM_FFI_ICHECK_GE(x, y) TVM_FFI_ICHECK_BINARY_OP_(>=, x, y)
#define TVM_FFI_ICHECK_NOTNULL(x) TVM_FFI_ICHECK((x) != nullptr)

#endif  // TVM_FFI_ERROR_H_
