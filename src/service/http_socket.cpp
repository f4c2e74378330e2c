// The HTTP server's socket I/O under deadlines (http_socket.h).
#include "service/http_socket.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "common/error.h"

namespace ptxbench::http {
namespace {

constexpr const char* kLib = "http";
constexpr std::size_t kReadChunk = 64 << 10;
constexpr double kLingerS = 1.0;

}  // namespace

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string errno_text(int err) { return std::strerror(err); }

std::string format_ipv4(const in_addr& addr) {
  char ip[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr, ip, sizeof ip);
  return ip;
}

std::string format_endpoint(const sockaddr_in& addr) {
  return format_ipv4(addr.sin_addr) + ":" + std::to_string(ntohs(addr.sin_port));
}

bool parse_ipv4(const std::string& host, in_addr& out) {
  if (host == "localhost") {
    out.s_addr = htonl(INADDR_LOOPBACK);
    return true;
  }
  return ::inet_pton(AF_INET, host.c_str(), &out) == 1;
}

Fd listen_tcp(const in_addr& ip, int port, const std::string& wanted, sockaddr_in& bound) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) throw Error(kLib, "socket: " + errno_text(errno));
  // Lets a restarted service rebind while old connections sit in TIME_WAIT; Linux still refuses a
  // port that another socket is listening on.
  int yes = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr = ip;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    throw Error(kLib, "cannot listen on " + wanted + ": " + errno_text(err) +
                          (err == EADDRINUSE ? " (is another server running on this port?)" : ""));
  }
  if (::listen(fd.get(), SOMAXCONN) != 0) throw Error(kLib, "cannot listen on " + wanted + ": " + errno_text(errno));
  socklen_t len = sizeof addr;
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw Error(kLib, "getsockname: " + errno_text(errno));
  bound = addr;
  return fd;
}

Fd make_eventfd() {
  int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) throw Error(kLib, "eventfd: " + errno_text(errno));
  return Fd(fd);
}

void signal_eventfd(int fd) {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(fd, &one, sizeof one);  // EAGAIN only when already signalled
}

Wait wait_for(int fd, short events, Clock::time_point deadline, int stop_fd) {
  for (;;) {
    auto now = Clock::now();
    if (now >= deadline) return Wait::timeout;
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    pollfd p[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    int rc = ::poll(p, stop_fd >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(ms, 60'000)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return Wait::ready;  // let the following recv/send report the failure
    if (stop_fd >= 0 && p[1].revents) return Wait::stopping;
    if (p[0].revents) return Wait::ready;
  }
}

bool send_all(int fd, std::string_view data, double timeout_s) {
  auto deadline = Clock::now() + seconds(timeout_s);
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);  // no SIGPIPE on a closed peer
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      deadline = Clock::now() + seconds(timeout_s);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (wait_for(fd, POLLOUT, deadline, -1) != Wait::ready) return false;
      continue;
    }
    return false;
  }
  return true;
}

Read read_some(int fd, std::string& buffer, Clock::time_point deadline, const std::atomic<bool>& stopping, int stop_fd) {
  char chunk[kReadChunk];
  for (;;) {
    if (stopping) return Read::stopping;
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n > 0) {
      buffer.append(chunk, static_cast<std::size_t>(n));
      return Read::data;
    }
    if (n == 0) return Read::eof;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return Read::eof;  // reset: nothing more will come
    switch (wait_for(fd, POLLIN, deadline, stop_fd)) {
      case Wait::ready: continue;
      case Wait::timeout: return Read::timeout;
      case Wait::stopping: return Read::stopping;
    }
  }
}

void linger_close(int fd, double timeout_s, int stop_fd) {
  ::shutdown(fd, SHUT_WR);
  auto deadline = Clock::now() + seconds(std::min(kLingerS, timeout_s));
  char chunk[kReadChunk];
  for (;;) {
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (wait_for(fd, POLLIN, deadline, stop_fd) == Wait::ready) continue;
    }
    return;  // peer closed, error, time up or shutting down
  }
}

}  // namespace ptxbench::http
