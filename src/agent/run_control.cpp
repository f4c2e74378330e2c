#include "agent/run_control.h"

#include <chrono>
#include <cstdio>

namespace ptxbench {

void RunControl::fail(const std::string& reason) {
  {
    std::lock_guard lock(m_mutex);
    if (m_stopped) return;
    m_stopped = true;
    m_reason = reason;
  }
  m_wake.notify_all();
}

bool RunControl::stopped() const {
  std::lock_guard lock(m_mutex);
  return m_stopped;
}

std::string RunControl::reason() const {
  std::lock_guard lock(m_mutex);
  return m_reason;
}

bool RunControl::sleep_for(double seconds) {
  std::unique_lock lock(m_mutex);
  if (seconds > 0) m_wake.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return m_stopped; });
  return !m_stopped;
}

void RunControl::notice(const std::string& line) const {
  std::function<void(const std::string&)> sink;
  {
    std::lock_guard lock(m_mutex);
    sink = m_sink;
  }
  if (sink) {
    sink(line);
    return;
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void RunControl::set_notice_sink(std::function<void(const std::string&)> sink) {
  std::lock_guard lock(m_mutex);
  m_sink = std::move(sink);
}

}  // namespace ptxbench
