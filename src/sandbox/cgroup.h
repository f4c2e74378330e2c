// A memory cgroup of its own for one sandboxed process tree: its host memory is capped, the
// kernel's OOM killer acts inside it (never on the worker), and afterwards we can tell that it
// ran out. cgroup v2 (memory.max, memory.events) or v1 (memory.limit_in_bytes,
// memory.oom_control), whichever the host mounts; removed (its processes killed) on destruction.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace ptxbench {

class ProcessCgroup {
 public:
  /// Creates the group with the limit. Throws EnvironmentError when no writable memory cgroup
  /// hierarchy exists (not root, or none mounted); `available()` says so beforehand.
  explicit ProcessCgroup(uint64_t memory_bytes);
  ~ProcessCgroup();
  ProcessCgroup(const ProcessCgroup&) = delete;
  ProcessCgroup& operator=(const ProcessCgroup&) = delete;

  /// Whether this host lets us create memory cgroups, and which version ("v2", "v1", or empty).
  static std::string available();

  /// Moves `pid` into the group (before it runs anything that allocates).
  void attach(pid_t pid) const;
  /// Times the kernel killed a process of the group for lack of memory.
  [[nodiscard]] uint64_t oom_kills() const;
  /// Peak memory use in bytes, when the kernel reports it.
  [[nodiscard]] std::optional<uint64_t> peak_bytes() const;
  [[nodiscard]] const std::string& version() const noexcept { return m_version; }
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }
  [[nodiscard]] uint64_t limit_bytes() const noexcept { return m_limit; }

 private:
  std::string m_version;
  std::string m_path;
  uint64_t m_limit = 0;
};

}  // namespace ptxbench
