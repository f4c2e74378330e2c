// Who may use a GPU when several worker processes share it. Untimed work (compile-side checks,
// compute-sanitizer, correctness trials, ncu) runs concurrently under a shared hold; a timed stage
// (and the canary) takes the GPU exclusively, so no other process launches work while it measures.
// Cross-process (flock on files beside the queue database), writer-preferring through a turnstile so
// a timing stage is not starved by a stream of untimed ones; released when the holder dies.
#pragma once

#include <string>

namespace ptxbench {

class GpuLock {
 public:
  enum class Mode { shared, exclusive };

  /// A held lock; released on destruction. Empty path: no locking (a GPU used by one process).
  class Hold {
   public:
    Hold() = default;
    ~Hold();
    Hold(Hold&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
    Hold& operator=(Hold&& o) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    [[nodiscard]] bool held() const noexcept { return m_fd >= 0; }

   private:
    friend class GpuLock;
    explicit Hold(int fd) : m_fd(fd) {}
    int m_fd = -1;
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
