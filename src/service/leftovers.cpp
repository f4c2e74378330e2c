#include "service/leftovers.h"

#include <chrono>
#include <thread>

#include "common/sha256.h"
#include "common/subprocess.h"

namespace ptxbench {

fs::path service_scratch_root(const std::string& db) {
  std::string key = fs::absolute(db).lexically_normal().string();
  return cache_root() / "scratch" / ("serve-" + sha256_hex(key).substr(0, 16));
}

Leftovers clear_leftovers(const fs::path& scratch_root) {
  Leftovers l;
  // The root's own path with a separator: "serve-ab12" must not match "serve-ab123".
  std::string marker = (fs::absolute(scratch_root).lexically_normal() / "").string();
  l.processes_killed = kill_processes_mentioning(marker);
  // SIGKILL is asynchronous: give the processes a moment to go before removing their folders.
  for (int i = 0; i < 50 && l.processes_killed > 0 && kill_processes_mentioning(marker) > 0; ++i)
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
