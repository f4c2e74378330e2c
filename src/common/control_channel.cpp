#include "common/control_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/error.h"

namespace ptxbench {

constexpr std::size_t kMaxLine = 64 << 20;

ControlChannel::~ControlChannel() {
  if (m_fd >= 0) ::close(m_fd);
}

void ControlChannel::send(const ordered_json& message) {
  std::string line = message.dump() + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::send(m_fd, line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw ChannelError(ChannelFailure::closed, std::string("send failed: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

ordered_json ControlChannel::receive(double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    auto nl = m_buffer.find('\n');
    if (nl != std::string::npos) {
      std::string line = m_buffer.substr(0, nl);
      m_buffer.erase(0, nl + 1);
      try {
        return ordered_json::parse(line);
      } catch (const std::exception& e) {
        throw ChannelError(ChannelFailure::malformed, std::string("malformed message: ") + e.what());
      }
    }
    if (m_buffer.size() > kMaxLine) throw ChannelError(ChannelFailure::malformed, "message too long");
    int wait_ms = -1;
    if (timeout_s >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw ChannelError(ChannelFailure::timeout, "no reply in time");
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 1000));
    }
    pollfd p{m_fd, POLLIN, 0};
    int rc = ::poll(&p, 1, wait_ms);
    if (rc < 0 && errno != EINTR) throw ChannelError(ChannelFailure::closed, "poll failed");
    if (rc <= 0) continue;
    char buf[65536];
    ssize_t n = ::recv(m_fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) throw ChannelError(ChannelFailure::closed, "peer closed the channel");
    m_buffer.append(buf, static_cast<std::size_t>(n));
  }
}

void make_socket_pair(int fds[2]) {
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error("runner", std::string("socketpair: ") + std::strerror(errno));
}

}  // namespace ptxbench
