// JSON-lines messages over a socket between the worker and its runner, with deadlines: a silent
// or dead peer becomes a typed error, never a blocked caller.
#pragma once

#include <string>

#include "common/json_check.h"

namespace ptxbench {

enum class ChannelFailure { timeout, closed, malformed };

struct ChannelError : std::runtime_error {
  ChannelError(ChannelFailure kind, const std::string& what) : std::runtime_error(what), kind(kind) {}
  ChannelFailure kind;
};

class ControlChannel {
 public:
  explicit ControlChannel(int fd) : m_fd(fd) {}
  ~ControlChannel();
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  void send(const ordered_json& message);
  /// Waits up to timeout_s (negative: forever) for one complete line.
  ordered_json receive(double timeout_s);
  [[nodiscard]] int fd() const noexcept { return m_fd; }

 private:
  int m_fd;
  std::string m_buffer;
};

/// A connected socket pair: [0] for us, [1] for the child (close-on-exec set on both).
void make_socket_pair(int fds[2]);

}  // namespace ptxbench
