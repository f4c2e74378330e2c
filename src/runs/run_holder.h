// Which process holds a run while it is `running`, and whether that process still lives: a run
// whose process was killed (kill -9, a crash, a lost machine) is shown as `crashed` instead of
// `running` forever, and `--resume` can take it over while a live holder's run is refused.
#pragma once

#include <cstdint>
#include <string>

namespace ptxbench {

/// A process, told apart from a later one that reuses its pid by its start time (and the boot it
/// started in).
struct RunHolder {
  int64_t pid = 0;
  std::string host;     ///< gethostname(): a pid means nothing on another machine
  std::string started;  ///< "<boot id>/<start time in clock ticks since boot>" from /proc; "" when unreadable

  /// The calling process.
  [[nodiscard]] static RunHolder current();

  enum class Liveness {
    alive,    ///< the same process (pid, start time) runs on this host
    gone,     ///< this host, and no such process (or a zombie, or another process with its pid)
    unknown,  ///< another host: nothing here can tell
  };
  [[nodiscard]] Liveness liveness() const;
  /// "pid 4242 on host gpu-7".
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] bool same_process(const RunHolder& other) const {
    return pid == other.pid && host == other.host && started == other.started;
  }
};

/// The start stamp RunHolder::started holds for `pid` on this host; "" when the process does not
/// exist (or has exited and waits to be reaped: a zombie runs nothing).
[[nodiscard]] std::string process_start_stamp(int64_t pid);

}  // namespace ptxbench
