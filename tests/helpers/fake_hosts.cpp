#include "helpers/fake_hosts.h"

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

#include "common/error.h"
#include "helpers/redis_server.h"
#include "service/local_service.h"

namespace ptxbench::fakes {
namespace {

std::string tail(const std::string& text, std::size_t bytes) {
  return text.size() > bytes ? "…" + text.substr(text.size() - bytes) : text;
}

}  // namespace

fs::path ptxbench_under_test() {
  if (const char* bin = std::getenv("PTXBENCH_BIN"); bin && *bin) {
    fs::path p(bin);
    return fs::is_directory(p) ? p / "ptxbench" : p;
  }
  return executable_dir() / "ptxbench";
}

RedisQueueAccess redis_queue_access(const RedisServer& redis, const std::string& prefix) {
  return {"redis://" + redis.user() + "@127.0.0.1:" + std::to_string(redis.port()) + "?prefix=" + prefix, redis.password_file()};
}

std::vector<std::string> test_process_env(const fs::path& cache_dir) {
  return {std::string("PTXBENCH_HOME=") + PTXBENCH_SOURCE_DIR, "PTXBENCH_CACHE_DIR=" + cache_dir.string()};
}

FakeHost::FakeHost(std::string name, int workers, const RedisQueueAccess& queue, const std::vector<std::string>& extra_args,
                   const std::vector<std::string>& env)
    : m_name(std::move(name)) {
  for (int device = 0; device < workers; ++device) {
    ProcessSpec spec;
    spec.argv = {ptxbench_under_test().string(), "worker"};
    for (const auto& a : queue.args()) spec.argv.push_back(a);
    spec.argv.insert(spec.argv.end(), {"--device", std::to_string(device), "--fake", "--host", m_name});
    spec.argv.insert(spec.argv.end(), extra_args.begin(), extra_args.end());
    spec.env_overrides = env;
    spec.output_cap_bytes = 1 << 20;
    spec.die_with_parent = true;
    m_workers.push_back(std::make_unique<ChildProcess>(spec));
  }
}

FakeHost::~FakeHost() {
  for (auto& w : m_workers) w->kill_and_wait();
}

std::vector<pid_t> FakeHost::pids() const {
  std::vector<pid_t> out;
  for (const auto& w : m_workers) out.push_back(w->pid());
  return out;
}

void FakeHost::kill_workers() {
  // One signal per pid, all sent before any is reaped: the host goes down at once.
  for (const auto& w : m_workers) ::kill(w->pid(), SIGKILL);
  for (auto& w : m_workers) w->wait_for(10);
}

std::vector<std::string> FakeHost::exited() {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < m_workers.size(); ++i)
    if (auto status = m_workers[i]->poll_exit())
      out.push_back(m_name + "/gpu" + std::to_string(i) + " (pid " + std::to_string(m_workers[i]->pid()) + "): " + status->describe());
  return out;
}

std::string FakeHost::log(std::size_t tail_bytes_each) {
  std::string out;
  for (std::size_t i = 0; i < m_workers.size(); ++i)
    out += "--- " + m_name + " worker --device " + std::to_string(i) + " (pid " + std::to_string(m_workers[i]->pid()) +
           ") stderr:\n" + tail(m_workers[i]->stderr_capture().text, tail_bytes_each) + "\n";
  return out;
}

FrontService::FrontService(const RedisQueueAccess& queue, const std::vector<std::string>& extra_args,
                           const std::vector<std::string>& env, double start_timeout_s) {
  ProcessSpec spec;
  spec.argv = {ptxbench_under_test().string(), "serve"};
  for (const auto& a : queue.args()) spec.argv.push_back(a);
  spec.argv.insert(spec.argv.end(), {"--listen", "127.0.0.1:0", "--gpus", "0"});
  spec.argv.insert(spec.argv.end(), extra_args.begin(), extra_args.end());
  spec.env_overrides = env;
  spec.output_cap_bytes = 1 << 20;
  spec.die_with_parent = true;
  m_child = std::make_unique<ChildProcess>(spec);
  m_url = wait_for_serve_url(*m_child, start_timeout_s);
  if (!m_url.empty()) return;
  std::string argv;
  for (const auto& a : spec.argv) argv += " " + a;
  std::optional<ExitStatus> exit = m_child->poll_exit();
  std::string what = exit ? "exited (" + exit->describe() + ") before printing its address"
                          : "did not print its address within " + std::to_string(static_cast<int>(start_timeout_s)) + " s";
  std::string err = m_child->stderr_capture().text;
  m_child->kill_and_wait();
  throw EnvironmentError("front service", "`" + argv.substr(1) + "` " + what + "; stderr:\n" + tail(err, 4000));
}

FrontService::~FrontService() {
  if (m_child) m_child->kill_and_wait();
}

bool FrontService::alive() { return !m_child->poll_exit(); }

std::string FrontService::log(std::size_t tail_bytes) { return tail(m_child->stderr_capture().text, tail_bytes); }

}  // namespace ptxbench::fakes
