// Several "hosts" of fake GPUs on one machine, for the multi-host tests of the Redis queue (issue
// 23): a host is a set of `ptxbench worker --queue redis://... --fake --host NAME` processes, one per
// fake GPU; the front is a `ptxbench serve --queue redis://... --gpus 0` (HTTP API, no workers of
// its own). Everything is a child process killed with its group when its owner is destroyed, and
// dies with the test (PR_SET_PDEATHSIG). Black-box: only the CLI and the HTTP API are used.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/fs.h"
#include "common/subprocess.h"

namespace ptxbench::fakes {

class RedisServer;

/// The ptxbench executable under test: $PTXBENCH_BIN (the executable itself, or the folder that
/// holds it, as scripts/service_load.sh reads it), else the one beside this test binary.
fs::path ptxbench_under_test();

/// How every process reaches the queue: `--queue URL --redis-password-file FILE`.
struct RedisQueueAccess {
  std::string url;          ///< redis://USER@127.0.0.1:PORT?prefix=NAME
  fs::path password_file;
  [[nodiscard]] std::vector<std::string> args() const { return {"--queue", url, "--redis-password-file", password_file.string()}; }
};
/// The queue `prefix` on a private test Redis, through its ACL user.
RedisQueueAccess redis_queue_access(const RedisServer& redis, const std::string& prefix);

/// The environment every test process gets: the source tree's data (PTXBENCH_HOME) and a cache
/// folder of the test's own (PTXBENCH_CACHE_DIR), so nothing is shared with other tests.
std::vector<std::string> test_process_env(const fs::path& cache_dir);

/// One fake host: `workers` worker processes, devices 0..workers-1, all with `--host name`.
class FakeHost {
 public:
  FakeHost(std::string name, int workers, const RedisQueueAccess& queue, const std::vector<std::string>& extra_args,
           const std::vector<std::string>& env);
  ~FakeHost();
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  [[nodiscard]] const std::string& name() const noexcept { return m_name; }
  [[nodiscard]] std::vector<pid_t> pids() const;
  /// kill -9 of every worker process by its pid (a host that lost power), then reaped.
  void kill_workers();
  /// Workers that have exited (killed, or crashed on their own), with how they ended.
  [[nodiscard]] std::vector<std::string> exited();
  /// The workers' stderr so far (their log), each headed by its device; the tail of each when long.
  [[nodiscard]] std::string log(std::size_t tail_bytes_each = 3000);

 private:
  std::string m_name;
  std::vector<std::unique_ptr<ChildProcess>> m_workers;
};

/// `ptxbench serve --queue ... --gpus 0 --listen 127.0.0.1:0 EXTRA...`, ready once it printed its
/// address (start_timeout_s, else EnvironmentError with its stderr).
class FrontService {
 public:
  FrontService(const RedisQueueAccess& queue, const std::vector<std::string>& extra_args,
               const std::vector<std::string>& env, double start_timeout_s = 30);
  ~FrontService();
  FrontService(const FrontService&) = delete;
  FrontService& operator=(const FrontService&) = delete;

  [[nodiscard]] const std::string& url() const noexcept { return m_url; }
  [[nodiscard]] pid_t pid() const noexcept { return m_child->pid(); }
  /// Whether the process is still running.
  [[nodiscard]] bool alive();
  /// Its stderr (log) so far, the tail when long.
  [[nodiscard]] std::string log(std::size_t tail_bytes = 6000);

 private:
  std::unique_ptr<ChildProcess> m_child;
  std::string m_url;
};

}  // namespace ptxbench::fakes
