// Who may use a GPU when several worker processes share it. Untimed work (compile-side checks,
// compute-sanitizer, correctness trials, ncu) runs concurrently under a shared hold; a timed stage
// (and the canary) takes the GPU exclusively, so no other process launches work while it measures.
// Cross-process (flock on files beside the queue database), writer-preferring through a turnstile so
// a timing stage is not starved by a stream of untimed ones; released when the holder dies.
#pragma once

#include <string>

#include "common/fd.h"

namespace ptxbench {

class GpuLock {
 public:
  enum class Mode { shared, exclusive };

  /// A held lock; released on destruction. Empty path: no locking (a GPU used by one process).
  class Hold {
   public:
    Hold() = default;
    [[nodiscard]] bool held() const noexcept { return m_fd.valid(); }

   private:
    friend class GpuLock;
    explicit Hold(Fd fd) : m_fd(std::move(fd)) {}
    Fd m_fd;  ///< closing the description releases the flock
  };

  explicit GpuLock(std::string path) : m_path(std::move(path)) {}
  /// Blocks until granted. Throws EnvironmentError when the lock files cannot be opened.
  [[nodiscard]] Hold acquire(Mode mode) const;
  [[nodiscard]] bool enabled() const noexcept { return !m_path.empty(); }
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

 private:
  std::string m_path;
};

}  // namespace ptxbench
