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

void ControlChannel::send(const ordered_json& message, const std::vector<int>& fds) {
  PTXB_ENSURE(fds.size() <= kMaxFds, "runner", "too many descriptors in one message");
  std::string line = message.dump() + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    iovec iov{line.data() + done, line.size() - done};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    std::vector<char> control;
    if (done == 0 && !fds.empty()) {
      control.resize(CMSG_SPACE(sizeof(int) * fds.size()));
      msg.msg_control = control.data();
      msg.msg_controllen = control.size();
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    ssize_t n = ::sendmsg(m_fd.get(), &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw ChannelError(ChannelFailure::closed, std::string("send failed: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

ordered_json ControlChannel::receive(double timeout_s) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(timeout_s);
  const auto spin_until = start + std::chrono::duration<double>(m_spin_s);
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
    if (m_buffer.size() > kMaxLine) throw ChannelError(ChannelFailure::malformed, "a message longer than " + std::to_string(kMaxLine >> 20) + " MiB");
    int wait_ms = -1;
    if (timeout_s >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw ChannelError(ChannelFailure::timeout, "no reply in time");
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 1000));
    }
    if (std::chrono::steady_clock::now() < spin_until) wait_ms = 0;
    pollfd p{m_fd.get(), POLLIN, 0};
    int rc = ::poll(&p, 1, wait_ms);
    if (rc < 0 && errno != EINTR) throw ChannelError(ChannelFailure::closed, "poll failed");
    if (rc <= 0) continue;
    char buf[65536];
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
    iovec iov{buf, sizeof buf};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(m_fd.get(), &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) throw ChannelError(ChannelFailure::closed, "peer closed the channel");
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        m_fds.emplace_back(fd);
      }
    }
    if (msg.msg_flags & MSG_CTRUNC) throw ChannelError(ChannelFailure::malformed, "too many descriptors in one message");
    m_buffer.append(buf, static_cast<std::size_t>(n));
  }
}

std::vector<Fd> ControlChannel::take_fds() { return std::exchange(m_fds, {}); }

void make_socket_pair(Fd& ours, Fd& theirs) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error("runner", std::string("socketpair: ") + std::strerror(errno));
  ours.reset(fds[0]);
  theirs.reset(fds[1]);
}

}  // namespace ptxbench
