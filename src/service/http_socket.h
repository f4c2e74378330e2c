// Socket I/O of the HTTP server under deadlines: the listening socket, waiting, reading and sending
// with a time limit, closing without losing a reply, and the eventfds that wake or stop threads.
// Internal to src/service/http_*.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>

#include "common/fd.h"

namespace ptxbench::http {

using Clock = std::chrono::steady_clock;

Clock::duration seconds(double s);
std::string errno_text(int err);

/// "127.0.0.1".
std::string format_ipv4(const in_addr& addr);
/// "127.0.0.1:54321".
std::string format_endpoint(const sockaddr_in& addr);
/// An IPv4 address in dotted form, or "localhost" (the loopback address).
bool parse_ipv4(const std::string& host, in_addr& out);

/// A listening socket bound to `ip`:`port` (0: ephemeral), non-blocking and close-on-exec. Throws
/// Error("http", ...) naming `wanted` (the address as asked for) when it cannot bind or listen.
/// `bound` is the address it got.
Fd listen_tcp(const in_addr& ip, int port, const std::string& wanted, sockaddr_in& bound);

/// A non-blocking eventfd; signal_eventfd makes it readable.
Fd make_eventfd();
void signal_eventfd(int fd);

enum class Wait { ready, timeout, stopping };
/// Waits until `fd` has `events` or the deadline passes; `stop_fd` (when >= 0) ends it at shutdown.
Wait wait_for(int fd, short events, Clock::time_point deadline, int stop_fd);

/// Sends everything, giving up after `timeout_s` without progress (a client that does not read).
bool send_all(int fd, std::string_view data, double timeout_s);

enum class Read { data, eof, timeout, stopping };
/// Appends what arrives on `fd` to `buffer`, waiting up to `deadline`; `stopping` (checked before
/// each read) and `stop_fd` end it at shutdown. eof also stands for a reset connection.
Read read_some(int fd, std::string& buffer, Clock::time_point deadline, const std::atomic<bool>& stopping, int stop_fd);

/// After an error reply we stop reading the request; closing with unread bytes in the socket makes
/// the kernel send a reset, which can destroy the reply before the client reads it. So this
/// half-closes and drains for min(1 s, `timeout_s`) first (nginx's "lingering close").
void linger_close(int fd, double timeout_s, int stop_fd);

}  // namespace ptxbench::http
