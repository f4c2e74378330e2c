// A private redis-server for tests: loopback only, on a free port, in a folder of its own, with AOF
// on and one ACL user whose password is in a file (the default user has a password nobody knows). Stopped (or killed)
// by its owner; a test process that dies takes it along (PR_SET_PDEATHSIG).
#pragma once

#include <memory>
#include <string>

#include "common/fs.h"
#include "common/subprocess.h"
#include "service/redis_client.h"

namespace ptxbench::fakes {

class RedisServer {
 public:
  /// The redis-server executable on PATH, or "" (tests skip then: scripts/setup.sh installs it).
  static std::string executable();

  /// Starts redis-server in `dir` (created if missing) on a free loopback port, and waits until it
  /// answers. `appendfsync`: "always" (every write on disk before its reply) or "everysec".
  explicit RedisServer(fs::path dir, std::string appendfsync = "always");
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  /// Graceful stop (SIGTERM: Redis flushes the AOF and exits).
  void stop();
  /// A crash: SIGKILL, nothing flushed beyond what appendfsync already wrote.
  void kill();
  /// Starts again on the same folder and port (the AOF is loaded); waits until it answers.
  void start();
  [[nodiscard]] bool running() const noexcept { return m_process != nullptr; }

  [[nodiscard]] int port() const noexcept { return m_port; }
  [[nodiscard]] const fs::path& dir() const noexcept { return m_dir; }
  [[nodiscard]] const std::string& user() const noexcept { return m_user; }
  [[nodiscard]] fs::path password_file() const { return m_dir / "redis.password"; }
  /// Options for a client of the ACL user, the password read from password_file().
  [[nodiscard]] RedisOptions client_options() const;
  /// The tail of the server's log, for failure messages.
  [[nodiscard]] std::string log_tail() const;

 private:
  void write_config(const std::string& appendfsync);
  fs::path m_dir;
  int m_port = 0;
  std::string m_user = "ptxbench";
  std::unique_ptr<ChildProcess> m_process;
};

}  // namespace ptxbench::fakes
