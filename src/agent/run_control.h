// What the trajectories of one run share besides the store: the run's failure (the first error
// that must stop the whole run, such as an INFRA_ERROR that outlived its re-runs; the other
// trajectories end their current step and return) and where one-line notices go (retries,
// re-runs), so a run never waits silently.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

namespace ptxbench {

class RunControl {
 public:
  /// Stops the run; the first reason is kept. Wakes every sleep_for.
  void fail(const std::string& reason);
  [[nodiscard]] bool stopped() const;
  [[nodiscard]] std::string reason() const;
  /// Waits `seconds`, or less when the run is stopped meanwhile; false then.
  bool sleep_for(double seconds);

  /// One line for the person watching (no newline needed): stderr unless a sink is set (the
  /// progress display, which keeps its block on a terminal intact). Thread-safe.
  void notice(const std::string& line) const;
  void set_notice_sink(std::function<void(const std::string&)> sink);

 private:
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stopped = false;
  std::string m_reason;
  std::function<void(const std::string&)> m_sink;
};

}  // namespace ptxbench
