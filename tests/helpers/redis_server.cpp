#include "helpers/redis_server.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "common/error.h"
#include "common/fd.h"
#include "service/task_queue.h"

namespace ptxbench::fakes {
namespace {

// Redis loads a large AOF in well under this; a slow CI host should not fail the test.
constexpr double kStartTimeoutS = 20;

/// A loopback port nobody listens on now (the kernel's pick for port 0).
int free_loopback_port() {
  Fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (!s.valid() || ::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw EnvironmentError("redis test server", "cannot find a free loopback port");
  return ntohs(a.sin_port);
}

}  // namespace

std::string RedisServer::executable() { return find_on_path("redis-server"); }

RedisServer::RedisServer(fs::path dir, std::string appendfsync) : m_dir(std::move(dir)) {
  if (executable().empty()) throw EnvironmentError("redis test server", "redis-server is not installed");
  fs::create_directories(m_dir);
  std::string password = new_task_id();  // 128 random bits
  write_file_atomic(password_file(), password + "\n");
  fs::permissions(password_file(), fs::perms::owner_read | fs::perms::owner_write);
  // Every client must authenticate. NOTES: the default user keeps its permissions, locked by a
  // random password nobody is given, rather than `user default off`: Redis replays the AOF's
  // MULTI/EXEC blocks (XREADGROUP of several entries, every Lua script's effects) as the default
  // user and, before the fix of redis/redis#14541 (Debian 12 ships 7.0.15), silently drops them on
  // load when that user may not run them: the pending list and the claims would vanish at restart.
  write_file_atomic(m_dir / "users.acl", fmt::format("user default on >{} ~* &* +@all\nuser {} on >{} ~* &* +@all\n",
                                                     new_task_id(), m_user, password));
  // The port is free when chosen but not reserved: a test started in parallel (ctest -j) may take
  // it first, and then this server fails to start. Try another.
  for (int attempt = 1;; ++attempt) {
    m_port = free_loopback_port();
    write_config(appendfsync);
    try {
      start();
      return;
    } catch (const EnvironmentError&) {
      if (attempt == 3) throw;
    }
  }
}

void RedisServer::write_config(const std::string& appendfsync) {
  write_file_atomic(m_dir / "redis.conf",
                    fmt::format("bind 127.0.0.1\nport {}\nprotected-mode yes\ndaemonize no\ndir {}\nlogfile {}\n"
                                "aclfile {}\nappendonly yes\nappendfsync {}\nsave \"\"\n",
                                m_port, m_dir.string(), (m_dir / "redis.log").string(), (m_dir / "users.acl").string(),
                                appendfsync));
}

RedisServer::~RedisServer() {
  try {
    stop();
  } catch (...) {
    m_process.reset();  // kills the group
  }
}

RedisOptions RedisServer::client_options() const {
  RedisOptions o;
  o.host = "127.0.0.1";
  o.port = m_port;
  o.user = m_user;
  o.password = read_redis_password(password_file().string());
  o.connect_timeout_s = 2;
  o.io_timeout_s = 10;
  return o;
}

std::string RedisServer::log_tail() const {
  try {
    std::string log = read_file(m_dir / "redis.log");
    return log.size() > 2000 ? log.substr(log.size() - 2000) : log;
  } catch (const std::exception&) {
    return "(no log)";
  }
}

void RedisServer::start() {
  if (m_process) return;
  ProcessSpec spec;
  spec.argv = {executable(), (m_dir / "redis.conf").string()};
  spec.cwd = m_dir.string();
  spec.die_with_parent = true;
  m_process = std::make_unique<ChildProcess>(spec);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kStartTimeoutS);
  std::string last = "not tried";
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto exit = m_process->poll_exit()) {
      m_process.reset();
      throw EnvironmentError("redis test server", "redis-server exited at start (" + exit->describe() + "): " + log_tail());
    }
    try {
      RedisClient c(client_options());
      if (c.command({"PING"}).as_string() == "PONG") return;
    } catch (const RedisError& e) {
      last = e.what();  // LOADING: the AOF is being read
    } catch (const RedisConnectionError& e) {
      last = e.what();  // not listening yet
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  m_process.reset();
  throw EnvironmentError("redis test server", "redis-server did not answer within the start timeout: " + last + "\n" + log_tail());
}

void RedisServer::stop() {
  if (!m_process) return;
  ::kill(m_process->pid(), SIGTERM);
  if (!m_process->wait_for(10)) m_process->kill_and_wait();
  m_process.reset();
}

void RedisServer::kill() {
  if (!m_process) return;
  m_process->kill_and_wait();
  m_process.reset();
}

}  // namespace ptxbench::fakes
