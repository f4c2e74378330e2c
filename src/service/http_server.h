// A small HTTP/1.1 server for the service's JSON API: strict request parsing, bounded buffers and
// deadlines, so a malformed, huge or stalled client gets a clear error and never a crash or a hang.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ptxbench {

struct HttpRequest {
  std::string method;                          ///< "GET", "POST", ... (case as sent)
  std::string path;                            ///< "/v1/evaluations/abc": percent-decoded, no query
  std::map<std::string, std::string> query;    ///< decoded ?a=1&b=x ('+' is a space; a repeated key keeps the last value)
  std::map<std::string, std::string> headers;  ///< keys lower-cased; repeated fields joined with ", "
  std::string body;
  std::string remote;                          ///< "127.0.0.1:54321"
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  /// Extra headers. The server owns framing: Content-Length and Transfer-Encoding here are
  /// ignored, and "Connection: close" closes the connection after this response.
  std::vector<std::pair<std::string, std::string>> headers;

  static HttpResponse json(int status, const std::string& body);
  static HttpResponse text(int status, const std::string& body);  ///< text/plain; charset=utf-8
};

/// Called concurrently from the worker threads: it must be thread-safe. An exception becomes a
/// 500 with {"error": what()}; the server keeps running.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";  ///< bind address: an IPv4 address or "localhost"
  int port = 0;                    ///< 0: ephemeral (tests); port() tells the bound one
  int threads = 32;                ///< connection-handling threads (long-poll handlers block one each)
  std::size_t max_header_bytes = 16 << 10;  ///< request line + header fields
  std::size_t max_body_bytes = 4 << 20;
  double read_timeout_s = 10;      ///< one whole request, head and body (slowloris protection)
  double idle_timeout_s = 30;      ///< keep-alive idle
  /// Accepted connections waiting for a worker or for their first bytes, plus idle keep-alive
  /// ones; a new connection beyond this gets 503 and is closed.
  std::size_t max_waiting_connections = 1024;
};

/// Serves `handler` on a TCP socket. Connections are served by a pool of `threads` workers;
/// connections with nothing to read (new ones not yet sending, idle keep-alive ones) are watched
/// by the accept thread and cost no worker, so idle clients cannot starve the pool.
class HttpServer {
 public:
  /// Binds and listens (throws Error("http", ...) naming the address, e.g. when the port is in use;
  /// InputError for bad options). Connections queue in the backlog until start().
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();  ///< stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Starts the accept thread and the workers. A second call does nothing; after stop() it throws.
  void start();
  /// Stops accepting, closes idle and half-received connections at once, waits for running
  /// handlers to return (their responses go out with "Connection: close"; one a client is not
  /// reading is given up after read_timeout_s) and joins every thread. Idempotent and thread-safe.
  /// @warning Waits for running handlers: a long-polling handler must watch its own shutdown
  /// signal. Never call it from inside a handler (it would join its own thread).
  void stop();

  [[nodiscard]] int port() const noexcept { return m_port; }
  [[nodiscard]] std::string address() const;  ///< "127.0.0.1:PORT"

 private:
  struct State;
  std::unique_ptr<State> m_state;
  int m_port = 0;
};

/// Parses "HOST:PORT" (HOST an IPv4 address or "localhost", PORT 0-65535); throws
/// InputError("http", ...) when malformed.
std::pair<std::string, int> parse_listen_address(const std::string& address);

}  // namespace ptxbench
