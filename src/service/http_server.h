// A small HTTP/1.1 server for the service's JSON API: strict request parsing, bounded buffers and
// deadlines, so a malformed, huge or stalled client gets a clear error and never a crash or a hang.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

/// A response sent in pieces while it is produced (Transfer-Encoding: chunked): what a proxy
/// passes through from an upstream that streams server-sent events (coding_agent/usage_proxy.h).
class HttpStreamWriter {
 public:
  virtual ~HttpStreamWriter() = default;
  /// Sends the head (status, content type and extra headers, with HttpResponse's rules: the server
  /// owns framing). At most once; false when the client is gone.
  virtual bool begin(int status, const std::string& content_type,
                     const std::vector<std::pair<std::string, std::string>>& headers) = 0;
  /// Sends one chunk of the body now (an empty one sends nothing). False once the client is gone
  /// or has not read for read_timeout_s: the handler should stop producing and return.
  virtual bool write(std::string_view data) = 0;
  [[nodiscard]] virtual bool begun() const noexcept = 0;
};

/// A handler that may stream: it returns a whole response (as an HttpHandler does), or streams one
/// through `out` (begin, then write) and returns nullopt; the server then ends the body. An
/// exception before begin becomes a 500 as for HttpHandler; after it, the connection is dropped
/// without the last chunk, so the client sees a broken body rather than a short one.
using StreamingHttpHandler = std::function<std::optional<HttpResponse>(const HttpRequest&, HttpStreamWriter& out)>;

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
  /// The same, with a handler that may stream its responses.
  HttpServer(HttpServerOptions options, StreamingHttpHandler handler);
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
