#include "evaluator/gpu_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace ptxbench {
namespace {

Fd open_lock_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));  // not inherited by runners
  if (!fd.valid()) throw EnvironmentError("gpu lock", "cannot open " + path + ": " + std::strerror(errno));
  return fd;
}

void lock_fd(const Fd& fd, int op, const std::string& path) {
  while (::flock(fd.get(), op) != 0) {
    if (errno == EINTR) continue;
    throw EnvironmentError("gpu lock", "flock " + path + ": " + std::strerror(errno));
  }
}

}  // namespace

GpuLock::Hold GpuLock::acquire(Mode mode) const {
  if (m_path.empty()) return Hold{};
  // Turnstile: every acquirer passes through it exclusively. A writer keeps it while it waits for
  // the readers inside to leave, so no new reader gets in ahead of it.
  std::string gate_path = m_path + ".turnstile";
  Fd gate = open_lock_file(gate_path);
  lock_fd(gate, LOCK_EX, gate_path);
  Fd fd = open_lock_file(m_path);
  lock_fd(fd, mode == Mode::exclusive ? LOCK_EX : LOCK_SH, m_path);
  return Hold{std::move(fd)};  // the gate closes here, letting the next acquirer in
}

}  // namespace ptxbench
