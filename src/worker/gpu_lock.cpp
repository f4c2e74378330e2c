#include "worker/gpu_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace ptxbench {
namespace {

int open_lock_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);  // not inherited by runners
  if (fd < 0) throw EnvironmentError("gpu lock", "cannot open " + path + ": " + std::strerror(errno));
  return fd;
}

void lock_fd(int fd, int op, const std::string& path) {
  while (::flock(fd, op) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    ::close(fd);
    throw EnvironmentError("gpu lock", "flock " + path + ": " + std::strerror(e));
  }
}

}  // namespace

GpuLock::Hold::~Hold() {
  if (m_fd >= 0) ::close(m_fd);  // closing the description releases the flock
}

GpuLock::Hold& GpuLock::Hold::operator=(Hold&& o) noexcept {
  if (this != &o) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = o.m_fd;
    o.m_fd = -1;
  }
  return *this;
}

GpuLock::Hold GpuLock::acquire(Mode mode) const {
  if (m_path.empty()) return Hold{};
  // Turnstile: every acquirer passes through it exclusively. A writer keeps it while it waits for
  // the readers inside to leave, so no new reader gets in ahead of it.
  std::string gate_path = m_path + ".turnstile";
  int gate = open_lock_file(gate_path);
  lock_fd(gate, LOCK_EX, gate_path);
  int fd = -1;
  try {
    fd = open_lock_file(m_path);
    lock_fd(fd, mode == Mode::exclusive ? LOCK_EX : LOCK_SH, m_path);
  } catch (...) {
    ::close(gate);
    throw;
  }
  ::close(gate);
  return Hold{fd};
}

}  // namespace ptxbench
