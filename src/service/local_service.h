// A `ptxbench serve` started as a child process on an ephemeral loopback port: what `ptxbench run`
// uses when its config says "service": "local", and what the service tests start. Killed with its
// process group (workers and runners included) when destroyed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/fs.h"
#include "common/subprocess.h"

namespace ptxbench {

/// Waits until a `ptxbench serve` child (its stdout captured) prints "listening on http://HOST:PORT
/// ...": returns that URL; "" when the child exited or `timeout_s` passed first.
std::string wait_for_serve_url(ChildProcess& serve, double timeout_s);

class LocalService {
 public:
  /// Starts `<ptxbench> serve --listen LISTEN --db DB ARGS...` and waits (up to `start_timeout_s`)
  /// for its "listening on http://..." line. Throws EnvironmentError with its stderr otherwise.
  LocalService(const fs::path& ptxbench, const fs::path& db, const std::vector<std::string>& args = {},
               const std::string& listen = "127.0.0.1:0", std::vector<std::string> env = {}, double start_timeout_s = 30);
  ~LocalService();
  LocalService(const LocalService&) = delete;
  LocalService& operator=(const LocalService&) = delete;

  [[nodiscard]] const std::string& url() const noexcept { return m_url; }
  [[nodiscard]] pid_t pid() const;
  /// What the service wrote to stderr so far: its log and its workers' (capped at 1 MiB, head and tail).
  [[nodiscard]] std::string log() const;
  /// SIGKILL of the service process alone (not its group), as a crash would do.
  void crash();

 private:
  std::unique_ptr<ChildProcess> m_child;
  std::string m_url;
};

}  // namespace ptxbench
