// JSON-lines messages over a socket between the worker and its runner, with deadlines: a silent
// or dead peer becomes a typed error, never a blocked caller. A message may carry file
// descriptors (SCM_RIGHTS): the worker hands the runner its shared GPU buffers that way, so the
// runner needs no permission over the worker's process (docs/sandbox.md).
#pragma once

#include <string>
#include <vector>

#include "common/fd.h"
#include "common/json_check.h"

namespace ptxbench {

enum class ChannelFailure { timeout, closed, malformed };

struct ChannelError : std::runtime_error {
  ChannelError(ChannelFailure kind, const std::string& what) : std::runtime_error(what), kind(kind) {}
  ChannelFailure kind;
};

class ControlChannel {
 public:
  explicit ControlChannel(Fd fd) : m_fd(std::move(fd)) {}
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  /// Sends one message; `fds` (at most kMaxFds) travel with its first byte.
  void send(const ordered_json& message, const std::vector<int>& fds = {});
  /// Waits up to timeout_s (negative: forever) for one complete line.
  ordered_json receive(double timeout_s);
  /// Before receive() sleeps in poll, it polls without sleeping for up to `seconds`: a reply that
  /// comes within that time is seen at once, not after the scheduler wakes a sleeping thread
  /// (which takes longer the longer it slept: tens of µs on the H200 host, seen per call).
  void set_spin(double seconds) noexcept { m_spin_s = seconds; }
  /// Descriptors received so far and not yet taken, in arrival order.
  [[nodiscard]] std::vector<Fd> take_fds();
  [[nodiscard]] int fd() const noexcept { return m_fd.get(); }

  static constexpr std::size_t kMaxFds = 64;

 private:
  Fd m_fd;
  std::string m_buffer;
  std::vector<Fd> m_fds;
  double m_spin_s = 0;
};

/// A connected socket pair: [0] for us, [1] for the child (close-on-exec set on both).
void make_socket_pair(Fd& ours, Fd& theirs);

}  // namespace ptxbench
