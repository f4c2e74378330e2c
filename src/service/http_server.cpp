// The HTTP/1.1 server behind the service API: an accept thread that also watches connections with
// nothing to read, a pool of workers that serve one request at a time under deadlines, and a JSON
// error reply for every way a client can misbehave. Parsing, response writing and socket I/O are
// in http_request_parser.h, http_response_writer.h and http_socket.h.
#include "service/http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "common/error.h"
#include "common/fd.h"
#include "service/http_request_parser.h"
#include "service/http_response_writer.h"
#include "service/http_socket.h"

namespace ptxbench {
namespace {

// The server's internals: request parsing, response writing, socket I/O under deadlines.
using http::asks_to_close;
using http::check_response;
using http::ChunkedWriter;
using http::Clock;
using http::error_body;
using http::find_head_end;
using http::format_endpoint;
using http::format_ipv4;
using http::linger_close;
using http::listen_tcp;
using http::make_eventfd;
using http::parse_head;
using http::parse_ipv4;
using http::ProtocolError;
using http::Read;
using http::read_some;
using http::RequestHead;
using http::seconds;
using http::send_all;
using http::serialize;
using http::signal_eventfd;

constexpr const char* kLib = "http";

// accept() failing for lack of descriptors leaves the connection in the backlog, so the listening
// socket stays readable; pause accepting instead of spinning.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

struct Connection {
  Fd fd;
  std::string remote;
  std::string buffer;            // received, not yet consumed (the start of a pipelined request)
  Clock::time_point deadline{};  // while watched by the accept thread: when to give up on it
};
using ConnectionPtr = std::unique_ptr<Connection>;

}  // namespace

struct HttpServer::State {
  HttpServerOptions options;
  StreamingHttpHandler handler;
  std::string bound_host;
  Fd listen_fd;
  Fd stop_fd;  // signalled once by stop() and never drained, so every later poll sees it
  Fd wake_fd;  // tells the accept thread that the inbox has connections to watch

  std::mutex mutex;  // guards queue, inbox, stopping transitions
  std::condition_variable queue_cv;
  std::deque<ConnectionPtr> queue;  // readable connections waiting for a worker
  std::vector<ConnectionPtr> inbox;  // idle keep-alive connections handed back by workers
  std::atomic<bool> stopping{false};

  std::mutex lifecycle_mutex;  // serialises start() and stop()
  bool started = false;
  bool stopped = false;
  std::thread accept_thread;
  std::vector<std::thread> workers;

  enum class Next { keep, close, linger, drop };

  void accept_loop();
  void accept_pending(std::vector<ConnectionPtr>& watched, Clock::time_point& backoff_until);
  void reject_busy(Connection& c);
  void worker_loop();
  void serve(ConnectionPtr c);
  Next serve_one(Connection& c);
  Next reply_error(Connection& c, int status, const std::string& message);
  /// The handler's whole response, or nullopt when it streamed one through `out`.
  std::optional<HttpResponse> call_handler(const HttpRequest& request, HttpStreamWriter& out);
  void enqueue(ConnectionPtr c);
  void park(ConnectionPtr c);
  void stop();
  /// read_some on `c` under the server's stop signals.
  Read read_more(Connection& c, Clock::time_point deadline) {
    return read_some(c.fd.get(), c.buffer, deadline, stopping, stop_fd.get());
  }
};

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : HttpServer(std::move(options), handler ? StreamingHttpHandler([h = std::move(handler)](const HttpRequest& r,
                                                                                             HttpStreamWriter&) {
      return std::optional<HttpResponse>(h(r));
    })
                                             : StreamingHttpHandler()) {}

HttpServer::HttpServer(HttpServerOptions options, StreamingHttpHandler handler)
    : m_state(std::make_unique<State>()) {
  if (options.threads < 1 || options.threads > 4096)
    throw InputError(kLib, "threads must be 1-4096, got " + std::to_string(options.threads));
  if (options.port < 0 || options.port > 65535)
    throw InputError(kLib, "port must be 0-65535, got " + std::to_string(options.port));
  if (!(options.read_timeout_s > 0) || !(options.idle_timeout_s > 0))
    throw InputError(kLib, "read and idle timeouts must be positive");
  if (options.max_header_bytes < 64 || options.max_waiting_connections < 1)
    throw InputError(kLib, "max_header_bytes must be >= 64 and max_waiting_connections >= 1");
  if (!handler) throw InputError(kLib, "no handler");
  in_addr ip{};
  if (!parse_ipv4(options.host, ip))
    throw InputError(kLib, "bind address '" + options.host + "' is not an IPv4 address or 'localhost'");

  State& s = *m_state;
  s.options = std::move(options);
  s.handler = std::move(handler);
  std::string wanted = s.options.host + ":" + std::to_string(s.options.port);

  sockaddr_in bound{};
  s.listen_fd = listen_tcp(ip, s.options.port, wanted, bound);
  m_port = ntohs(bound.sin_port);
  s.bound_host = format_ipv4(bound.sin_addr);
  s.stop_fd = make_eventfd();
  s.wake_fd = make_eventfd();
}

HttpServer::~HttpServer() { stop(); }

std::string HttpServer::address() const { return m_state->bound_host + ":" + std::to_string(m_port); }

void HttpServer::start() {
  State& s = *m_state;
  std::lock_guard lock(s.lifecycle_mutex);
  if (s.stopped) throw Error(kLib, "start() after stop(): create a new server");
  if (s.started) return;
  s.started = true;
  // A failure to create a thread propagates; stop() (from the destructor) joins those started.
  s.accept_thread = std::thread([&s] { s.accept_loop(); });
  for (int i = 0; i < s.options.threads; ++i) s.workers.emplace_back([&s] { s.worker_loop(); });
}

void HttpServer::stop() { m_state->stop(); }

void HttpServer::State::stop() {
  std::lock_guard lock(lifecycle_mutex);
  if (stopped) return;
  stopped = true;
  {
    std::lock_guard q(mutex);
    stopping = true;
  }
  signal_eventfd(stop_fd.get());
  queue_cv.notify_all();
  if (accept_thread.joinable()) accept_thread.join();
  for (auto& w : workers)
    if (w.joinable()) w.join();
  listen_fd.reset();
  std::lock_guard q(mutex);
  queue.clear();  // closes connections nobody served
  inbox.clear();
}

void HttpServer::State::accept_loop() {
  // Connections with nothing to read yet: new ones (deadline read_timeout_s) and idle keep-alive
  // ones (deadline idle_timeout_s). Watching them here keeps them off the workers.
  std::vector<ConnectionPtr> watched;
  std::vector<pollfd> fds;
  Clock::time_point backoff_until{};
  while (!stopping) {
    auto now = Clock::now();
    bool accepting = now >= backoff_until;
    fds.clear();
    fds.push_back({stop_fd.get(), POLLIN, 0});
    fds.push_back({wake_fd.get(), POLLIN, 0});
    fds.push_back({accepting ? listen_fd.get() : -1, POLLIN, 0});  // poll skips a negative fd
    Clock::time_point next = accepting ? Clock::time_point::max() : backoff_until;
    for (const auto& c : watched) {
      fds.push_back({c->fd.get(), POLLIN, 0});
      next = std::min(next, c->deadline);
    }
    int timeout_ms = -1;
    if (next != Clock::time_point::max())
      timeout_ms = static_cast<int>(std::clamp<long long>(
          std::chrono::ceil<std::chrono::milliseconds>(next - now).count(), 0, 60'000));
    int rc = ::poll(fds.data(), fds.size(), timeout_ms);
    if (rc < 0 && errno != EINTR) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // ENOMEM: retry, do not spin
      continue;
    }
    if (rc < 0) continue;
    if (fds[0].revents) break;

    std::size_t polled = watched.size();
    if (fds[1].revents) {
      std::uint64_t count;
      [[maybe_unused]] auto n = ::read(wake_fd.get(), &count, sizeof count);
      std::lock_guard lock(mutex);
      for (auto& c : inbox) watched.push_back(std::move(c));
      inbox.clear();
    }
    now = Clock::now();
    std::vector<ConnectionPtr> still;
    still.reserve(watched.size());
    for (std::size_t i = 0; i < watched.size(); ++i) {
      if (i < polled && fds[3 + i].revents) {
        enqueue(std::move(watched[i]));  // readable, or hung up: a worker reads and sees which
      } else if (watched[i]->deadline <= now) {
        watched[i].reset();  // silent too long: close without a reply, nothing was asked
      } else {
        still.push_back(std::move(watched[i]));
      }
    }
    watched = std::move(still);
    if (fds[2].revents) accept_pending(watched, backoff_until);
  }
}

void HttpServer::State::accept_pending(std::vector<ConnectionPtr>& watched, Clock::time_point& backoff_until) {
  for (;;) {
    sockaddr_in addr{};
    socklen_t len = sizeof addr;
    int fd = ::accept4(listen_fd.get(), reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        backoff_until = Clock::now() + kAcceptBackoff;
      return;  // EAGAIN: backlog empty
    }
    auto c = std::make_unique<Connection>();
    c->fd = Fd(fd);
    c->remote = format_endpoint(addr);
    // Responses go out in one send; without this a keep-alive client can wait for a delayed ACK.
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    std::size_t waiting = watched.size();
    {
      std::lock_guard lock(mutex);
      waiting += queue.size() + inbox.size();
    }
    if (waiting >= options.max_waiting_connections) {
      reject_busy(*c);
      continue;
    }
    c->deadline = Clock::now() + seconds(options.read_timeout_s);
    watched.push_back(std::move(c));
  }
}

void HttpServer::State::reject_busy(Connection& c) {
  // One non-blocking attempt: the accept thread must never wait on a client.
  HttpResponse r = HttpResponse::json(503, error_body("server busy: too many waiting connections"));
  r.headers.emplace_back("Retry-After", "1");
  std::string bytes = serialize(r, false, true);
  [[maybe_unused]] auto n = ::send(c.fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(c.fd.get(), SHUT_WR);
}

void HttpServer::State::enqueue(ConnectionPtr c) {
  {
    std::lock_guard lock(mutex);
    if (stopping) return;
    queue.push_back(std::move(c));
  }
  queue_cv.notify_one();
}

void HttpServer::State::park(ConnectionPtr c) {
  c->deadline = Clock::now() + seconds(options.idle_timeout_s);
  {
    std::lock_guard lock(mutex);
    if (stopping) return;  // closes it
    inbox.push_back(std::move(c));
  }
  signal_eventfd(wake_fd.get());
}

void HttpServer::State::worker_loop() {
  for (;;) {
    ConnectionPtr c;
    {
      std::unique_lock lock(mutex);
      queue_cv.wait(lock, [&] { return stopping || !queue.empty(); });
      if (stopping) return;
      c = std::move(queue.front());
      queue.pop_front();
    }
    try {
      serve(std::move(c));
    } catch (...) {
      // Out of memory or similar while serving one connection: drop it, keep the worker.
    }
  }
}

void HttpServer::State::serve(ConnectionPtr c) {
  for (;;) {
    switch (serve_one(*c)) {
      case Next::keep:
        if (!c->buffer.empty()) continue;  // a pipelined request is already here
        park(std::move(c));
        return;
      case Next::close:
        ::shutdown(c->fd.get(), SHUT_WR);
        return;
      case Next::linger:
        linger_close(c->fd.get(), options.read_timeout_s, stop_fd.get());
        return;
      case Next::drop:
        return;
    }
  }
}

HttpServer::State::Next HttpServer::State::serve_one(Connection& c) {
  const auto deadline = Clock::now() + seconds(options.read_timeout_s);
  std::string& buf = c.buffer;
  std::size_t head_end;
  for (;;) {
    // RFC 9112 §2.2: ignore empty lines before a request line (some clients send CRLF after a body).
    auto first = buf.find_first_not_of("\r\n");
    buf.erase(0, first == std::string::npos ? buf.size() : first);
    head_end = find_head_end(buf);
    if (head_end != std::string::npos) break;
    if (buf.size() > options.max_header_bytes) {
      if (buf.find('\n') == std::string::npos)
        return reply_error(c, 414, "request line longer than " + std::to_string(options.max_header_bytes) + " bytes");
      return reply_error(c, 431, "request header fields larger than " + std::to_string(options.max_header_bytes) + " bytes");
    }
    switch (read_more(c, deadline)) {
      case Read::data: break;
      case Read::eof:
      case Read::stopping: return Next::drop;
      case Read::timeout:
        if (buf.empty()) return Next::drop;
        return reply_error(c, 408, "request not received within " + std::to_string(options.read_timeout_s) + " s");
    }
  }
  if (head_end > options.max_header_bytes)
    return reply_error(c, 431, "request header fields larger than " + std::to_string(options.max_header_bytes) + " bytes");

  RequestHead head;
  try {
    head = parse_head(std::string_view(buf).substr(0, head_end));
  } catch (const ProtocolError& e) {
    return reply_error(c, e.status, e.message);
  }
  HttpRequest& request = head.request;
  request.remote = c.remote;
  // Refused before reading a byte of it; with Expect: 100-continue the client never sends it.
  if (head.content_length > options.max_body_bytes)
    return reply_error(c, 413, "request body of " + request.headers["content-length"] + " bytes exceeds the limit of " +
                                   std::to_string(options.max_body_bytes) + " bytes");
  std::size_t need = head_end + head.content_length;
  if (head.expect_continue && head.content_length > 0 && buf.size() < need) {
    if (!send_all(c.fd.get(), "HTTP/1.1 100 Continue\r\n\r\n", options.read_timeout_s)) return Next::drop;
  }
  while (buf.size() < need) {
    switch (read_more(c, deadline)) {
      case Read::data: break;
      case Read::eof:
      case Read::stopping: return Next::drop;
      case Read::timeout:
        return reply_error(c, 408, "request body not received within " + std::to_string(options.read_timeout_s) + " s");
    }
  }
  request.body = buf.substr(head_end, head.content_length);
  buf.erase(0, need);

  ChunkedWriter stream(c.fd.get(), options.read_timeout_s, request.method == "HEAD", head.close || stopping);
  std::optional<HttpResponse> whole = call_handler(request, stream);
  if (stream.begun()) {
    if (whole || stream.broken() || !stream.finish()) return Next::drop;  // whole: the handler threw after begin
    return stream.close() || stopping ? Next::close : Next::keep;
  }
  const HttpResponse& response = *whole;
  bool close = head.close || stopping || asks_to_close(response);
  if (!send_all(c.fd.get(), serialize(response, request.method == "HEAD", close), options.read_timeout_s))
    return Next::drop;
  return close ? Next::close : Next::keep;
}

std::optional<HttpResponse> HttpServer::State::call_handler(const HttpRequest& request, HttpStreamWriter& out) {
  try {
    std::optional<HttpResponse> response = handler(request, out);
    if (out.begun()) return std::nullopt;
    if (!response) return HttpResponse::json(500, error_body("handler returned no response and streamed none"));
    check_response(*response);
    return response;
  } catch (const std::exception& e) {
    return HttpResponse::json(500, error_body(e.what()));
  } catch (...) {
    return HttpResponse::json(500, error_body("handler threw a non-standard exception"));
  }
}

HttpServer::State::Next HttpServer::State::reply_error(Connection& c, int status, const std::string& message) {
  std::string bytes = serialize(HttpResponse::json(status, error_body(message)), false, true);
  if (!send_all(c.fd.get(), bytes, options.read_timeout_s)) return Next::drop;
  return Next::linger;
}

std::pair<std::string, int> parse_listen_address(const std::string& address) {
  auto fail = [&](const std::string& why) -> InputError {
    return InputError(kLib, "listen address '" + address + "': " + why);
  };
  auto colon = address.rfind(':');
  if (colon == std::string::npos) throw fail("expected HOST:PORT, e.g. 127.0.0.1:8080");
  std::string host = address.substr(0, colon);
  std::string port = address.substr(colon + 1);
  if (host.find(':') != std::string::npos || host.find('[') != std::string::npos)
    throw fail("IPv6 addresses are not supported");
  if (host.empty()) throw fail("missing host (use 127.0.0.1, 0.0.0.0 or localhost)");
  in_addr ip{};
  if (!parse_ipv4(host, ip)) throw fail("host '" + host + "' is not an IPv4 address or 'localhost'");
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw fail("port must be a number 0-65535");
  int value = std::stoi(port);
  if (value > 65535) throw fail("port must be a number 0-65535");
  return {host, value};
}

}  // namespace ptxbench
