#include "service/local_service.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include "common/error.h"

namespace ptxbench {

std::string wait_for_serve_url(ChildProcess& serve, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string out = serve.stdout_capture().text;
    auto pos = out.find("http://");
    if (pos != std::string::npos) {
      auto end = out.find_first_of(" \n", pos);
      if (end != std::string::npos) return out.substr(pos, end - pos);
    }
    if (serve.poll_exit()) return "";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

LocalService::LocalService(const fs::path& ptxbench, const fs::path& db, const std::vector<std::string>& args,
                           const std::string& listen, std::vector<std::string> env, double start_timeout_s) {
  ProcessSpec spec;
  spec.argv = {ptxbench.string(), "serve", "--listen", listen, "--db", db.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env_overrides = std::move(env);
  spec.output_cap_bytes = 1 << 20;
  spec.die_with_parent = true;
  m_child = std::make_unique<ChildProcess>(spec);
  m_url = wait_for_serve_url(*m_child, start_timeout_s);
  if (!m_url.empty()) return;
  std::string err = m_child->stderr_capture().text;
  m_child->kill_and_wait();
  throw EnvironmentError("local service", "`ptxbench serve` did not start: " + err);
}

LocalService::~LocalService() {
  if (m_child) m_child->kill_and_wait();
}

pid_t LocalService::pid() const { return m_child->pid(); }

std::string LocalService::log() const { return m_child->stderr_capture().text; }

void LocalService::crash() {
  ::kill(m_child->pid(), SIGKILL);
  m_child->wait_for(10);
}

}  // namespace ptxbench
