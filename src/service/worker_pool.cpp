#include "service/worker_pool.h"

#include <signal.h>

#include <algorithm>

#include "common/error.h"
#include "common/fs.h"
#include "service/service_log.h"
#include "service/task_queue.h"
#include "service/worker_loop.h"

namespace ptxbench {

WorkerPool::WorkerPool(WorkerPoolConfig config) : m_config(std::move(config)) {
  m_config.workers_per_gpu = std::max(1, m_config.workers_per_gpu);
  for (int d : m_config.devices)
    for (int k = 0; k < m_config.workers_per_gpu; ++k) {
      Slot s;
      s.device = d;
      s.name = "gpu" + std::to_string(d) + (m_config.workers_per_gpu > 1 ? "." + std::to_string(k) : "");
      m_slots.push_back(std::move(s));
    }
  for (int k = 0; k < m_config.check_workers; ++k) {
    Slot s;
    s.device = -1;
    s.lane = TaskLane::check;
    s.name = "check" + std::to_string(k);
    m_slots.push_back(std::move(s));
  }
}

WorkerPool::~WorkerPool() { stop(); }

std::string WorkerPool::lock_path(int device) const {
  if (m_config.workers_per_gpu <= 1) return "";
  fs::path db(m_config.db);
  return (db.parent_path() / (db.filename().string() + ".gpu" + std::to_string(device) + ".lock")).string();
}

void WorkerPool::spawn(Slot& s) {
  ProcessSpec spec;
  spec.argv = {m_config.self_exe, "worker", "--name", s.name, "--lease", std::to_string(m_config.lease_s),
               "--max-attempts", std::to_string(m_config.max_attempts)};
  if (s.lane == TaskLane::check) spec.argv.insert(spec.argv.end(), {"--lane", "check"});
  else spec.argv.insert(spec.argv.end(), {"--device", std::to_string(s.device)});
  if (m_config.queue.redis()) {
    spec.argv.insert(spec.argv.end(), {"--queue", m_config.queue.location, "--host", m_config.queue.host, "--arch", m_config.queue.arch});
    if (!m_config.queue.password_file.empty())
      spec.argv.insert(spec.argv.end(), {"--redis-password-file", m_config.queue.password_file});
  } else {
    spec.argv.insert(spec.argv.end(), {"--db", m_config.queue.location});
  }
  if (m_config.fake) spec.argv.push_back("--fake");
  if (std::string lock = s.lane == TaskLane::check ? "" : lock_path(s.device); !lock.empty()) {
    spec.argv.push_back("--gpu-lock");
    spec.argv.push_back(lock);
  }
  spec.argv.insert(spec.argv.end(), m_config.worker_args.begin(), m_config.worker_args.end());
  if (m_config.log_fd >= 0) {
    spec.control_fd = m_config.log_fd;
    spec.argv.insert(spec.argv.end(), {"--log-fd", "3"});
  }
  spec.output_cap_bytes = 64 << 10;
  spec.die_with_parent = true;
  s.process = std::make_unique<ChildProcess>(spec);
  s.state = "running";
  spdlog::debug("worker {} started on device {} (pid {})", s.name, s.device, s.process->pid());
}

void WorkerPool::start() {
  std::lock_guard<std::mutex> lock(m_mutex);
  for (auto& s : m_slots) spawn(s);
}

void WorkerPool::supervise() {
  std::lock_guard<std::mutex> lock(m_mutex);
  double now = TaskQueue::now();
  for (auto& s : m_slots) {
    if (s.state == "running" && s.process) {
      auto exited = s.process->poll_exit();
      if (!exited) continue;
      s.last_exit = exited->describe();
      std::string err = s.process->stderr_capture().text;
      if (!err.empty()) s.last_exit += ": " + err.substr(err.size() > 500 ? err.size() - 500 : 0);
      // The log takes one line per event.
      std::string said = s.last_exit;
      std::replace(said.begin(), said.end(), '\n', ' ');
      s.process.reset();
      int64_t taken_back = 0;
      try {
        taken_back = open_task_queue(m_config.queue)->recover_worker(s.name, "worker " + s.name + " " + exited->describe(),
                                                                     m_config.max_attempts);
      } catch (const EnvironmentError& e) {  // Redis down: the tasks come back when their lease passes
        spdlog::warn("worker {}: its tasks could not be taken back now ({}); their leases will", s.name, e.what());
      }
      s.failures.push_back(now);
      while (!s.failures.empty() && s.failures.front() < now - m_config.failure_window_s) s.failures.pop_front();
      if (static_cast<int>(s.failures.size()) >= m_config.exclude_after_failures) {
        s.state = "excluded";
        spdlog::error("worker {} {}; {} task(s) taken back; GPU {} excluded after {} failures within {:.0f} s (no more work "
                      "goes to it; restart the service to try it again)",
                      s.name, said, taken_back, s.device, s.failures.size(), m_config.failure_window_s);
        continue;
      }
      s.state = "restarting";
      s.restart_at = now + std::min(30.0, 0.5 * (1 << std::min<int>(static_cast<int>(s.failures.size()), 6)));
      spdlog::warn("worker {} {}; {} task(s) taken back (re-queued, or given up after {} attempts); restart in {:.1f} s",
                   s.name, said, taken_back, m_config.max_attempts, s.restart_at - now);
    }
    if (s.state == "restarting" && now >= s.restart_at) {
      ++s.restarts;
      spawn(s);
      spdlog::info("worker {} restarted (pid {}, restart {})", s.name, s.process->pid(), s.restarts);
    }
  }
}

void WorkerPool::stop() {
  std::lock_guard<std::mutex> lock(m_mutex);
  for (auto& s : m_slots) {
    if (s.process) s.process->kill_and_wait();
    s.process.reset();
    if (s.state != "excluded") s.state = "stopped";
  }
}

void WorkerPool::kill_worker(int device) {
  std::lock_guard<std::mutex> lock(m_mutex);
  for (auto& s : m_slots)
    if (s.device == device && s.process) ::kill(-s.process->pid(), SIGKILL);
}

ordered_json WorkerPool::status() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  ordered_json out = ordered_json::array();
  for (const auto& s : m_slots)
    out.push_back({{"device", s.device},
                   {"lane", to_string(s.lane)},
                   {"worker", s.name},
                   {"state", s.state},
                   {"pid", s.process ? s.process->pid() : 0},
                   {"restarts", s.restarts},
                   {"recent_failures", s.failures.size()},
                   {"last_exit", s.last_exit}});
  return out;
}

}  // namespace ptxbench
