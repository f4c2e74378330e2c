#include "service/instance.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <thread>

#include "common/error.h"
#include "common/sha256.h"
#include "common/subprocess.h"

namespace ptxbench {

InstanceLock::InstanceLock(const std::string& db) {
  std::string path = db + ".serve.lock";
  m_fd.reset(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!m_fd.valid()) throw EnvironmentError("serve", "cannot open " + path + ": " + std::strerror(errno));
  // A killed predecessor may take a moment to exit (its CUDA context torn down): wait up to 5 s.
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::flock(m_fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    int e = errno;
    m_fd.reset();
    if (e == EWOULDBLOCK)
      throw InputError("serve", "another service is running on the queue " + db + " (its lock " + path + " is held)");
    throw EnvironmentError("serve", "flock " + path + ": " + std::strerror(e));
  }
}

fs::path service_scratch_root(const std::string& db) {
  std::string key = fs::absolute(db).lexically_normal().string();
  return cache_root() / "scratch" / ("serve-" + sha256_hex(key).substr(0, 16));
}

Leftovers clear_leftovers(const fs::path& scratch_root) {
  Leftovers l;
  std::string root = fs::absolute(scratch_root).lexically_normal().string();
  l.processes_killed = kill_processes_in(root);
  // SIGKILL is asynchronous: give the processes a moment to go before removing their folders.
  for (int i = 0; i < 50 && l.processes_killed > 0 && kill_processes_in(root) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::error_code ec;
  fs::create_directories(scratch_root, ec);
  for (const auto& entry : fs::directory_iterator(scratch_root, ec)) {
    fs::remove_all(entry.path(), ec);
    if (!ec) ++l.folders_removed;
  }
  return l;
}

}  // namespace ptxbench
