// The HTTP/1.1 server behind the service API: an accept thread that also watches connections with
// nothing to read, a pool of workers that serve one request at a time under deadlines, and a JSON
// error reply for every way a client can misbehave.
#include "service/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>

#include "common/error.h"
#include "common/fd.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "http";
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxHeaderFields = 100;
constexpr std::size_t kReadChunk = 64 << 10;
// After an error reply we stop reading the request; closing with unread bytes in the socket makes
// the kernel send a reset, which can destroy the reply before the client reads it. So we half-close
// and drain for a short while first (nginx's "lingering close").
constexpr double kLingerS = 1.0;
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

/// A request we refuse: becomes an error reply with this status, then the connection closes.
struct ProtocolError {
  int status;
  std::string message;
};

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string errno_text(int err) { return std::strerror(err); }

const char* reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: break;
  }
  if (status < 300) return "OK";
  if (status < 400) return "Redirect";
  if (status < 500) return "Client Error";
  return "Server Error";
}

std::string error_body(const std::string& message) {
  // replace, not throw: an exception's what() may hold arbitrary bytes.
  return nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
  return out;
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Comma-separated list elements, trimmed and lower-cased, empty ones dropped.
std::vector<std::string> list_tokens(std::string_view value) {
  std::vector<std::string> out;
  while (!value.empty()) {
    auto comma = value.find(',');
    auto item = trim_ows(value.substr(0, comma));
    if (!item.empty()) out.push_back(lower(item));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// False on a malformed escape ("%zz", a trailing "%4").
bool percent_decode(std::string_view in, bool plus_is_space, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (plus_is_space && c == '+') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return true;
}

/// Offset just past the empty line that ends a request head, or npos. Lines end in CRLF or, as
/// RFC 9112 §2.2 allows a recipient to accept, a bare LF.
std::size_t find_head_end(const std::string& b) {
  for (auto i = b.find('\n'); i != std::string::npos; i = b.find('\n', i + 1)) {
    auto j = i + 1;
    if (j < b.size() && b[j] == '\r') ++j;
    if (j < b.size() && b[j] == '\n') return j + 1;
  }
  return std::string::npos;
}

struct RequestHead {
  HttpRequest request;
  std::size_t content_length = 0;
  bool expect_continue = false;
  bool close = false;  // HTTP/1.0, or "Connection: close"
};

void parse_target(std::string_view target, const std::string& method, HttpRequest& request) {
  for (char c : target)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      throw ProtocolError{400, "malformed request target"};
  if (target == "*") {
    if (method != "OPTIONS") throw ProtocolError{400, "request target '*' is only valid for OPTIONS"};
    request.path = "*";
    return;
  }
  std::string rooted;
  if (target.front() != '/') {
    // Absolute form ("http://host/path"), which RFC 9112 §3.2.2 says servers must accept.
    std::string prefix = lower(target.substr(0, std::min<std::size_t>(target.size(), 8)));
    std::size_t skip = prefix.rfind("http://", 0) == 0 ? 7 : prefix.rfind("https://", 0) == 0 ? 8 : 0;
    if (skip == 0) throw ProtocolError{400, "malformed request target"};
    target.remove_prefix(skip);
    auto rest = target.find_first_of("/?");
    target = rest == std::string_view::npos ? std::string_view() : target.substr(rest);
    if (target.empty() || target.front() == '?') {
      rooted = "/" + std::string(target);
      target = rooted;
    }
  }
  target = target.substr(0, target.find('#'));  // clients should not send fragments; ignore one
  auto qmark = target.find('?');
  if (!percent_decode(target.substr(0, qmark), false, request.path))
    throw ProtocolError{400, "malformed percent-encoding in the path"};
  if (request.path.find('\0') != std::string::npos) throw ProtocolError{400, "NUL byte in the path"};
  if (qmark == std::string_view::npos) return;
  std::string_view query = target.substr(qmark + 1);
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    if (!item.empty()) {
      auto eq = item.find('=');
      std::string key, value;
      if (!percent_decode(item.substr(0, eq), true, key) ||
          (eq != std::string_view::npos && !percent_decode(item.substr(eq + 1), true, value)))
        throw ProtocolError{400, "malformed percent-encoding in the query"};
      request.query[key] = value;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
}

/// Strict parse of a request head (request line, header fields, the empty line).
RequestHead parse_head(std::string_view head) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    auto nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    head.remove_prefix(nl + 1);
  }
  lines.pop_back();  // the empty line ending the head
  if (lines.empty()) throw ProtocolError{400, "empty request"};

  RequestHead out;
  HttpRequest& request = out.request;
  std::string_view line = lines[0];
  auto sp1 = line.find(' ');
  auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    throw ProtocolError{400, "malformed request line (expected 'METHOD TARGET HTTP/1.1')"};
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method) || target.empty())
    throw ProtocolError{400, "malformed request line (expected 'METHOD TARGET HTTP/1.1')"};
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(version[5])) || !std::isdigit(static_cast<unsigned char>(version[7])))
    throw ProtocolError{400, "malformed HTTP version '" + std::string(version) + "'"};
  if (version[5] != '1') throw ProtocolError{505, "only HTTP/1.0 and HTTP/1.1 are supported"};
  bool http10 = version[7] == '0';
  request.method = std::string(method);
  parse_target(target, request.method, request);

  if (lines.size() - 1 > kMaxHeaderFields)
    throw ProtocolError{431, "too many header fields (limit " + std::to_string(kMaxHeaderFields) + ")"};
  for (std::size_t i = 1; i < lines.size(); ++i) {
    line = lines[i];
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
      throw ProtocolError{400, "obsolete header line folding is not supported"};
    auto colon = line.find(':');
    // A name must be a token right up to the colon: whitespace before it is a smuggling vector
    // (RFC 9112 §5.1) and is rejected.
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
      throw ProtocolError{400, "malformed header line"};
    std::string name = lower(line.substr(0, colon));
    std::string_view value = trim_ows(line.substr(colon + 1));
    for (char c : value) {
      auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f)
        throw ProtocolError{400, "invalid character in header '" + name + "'"};
    }
    auto [it, inserted] = request.headers.emplace(name, std::string(value));
    if (!inserted) {
      if (name == "host") throw ProtocolError{400, "more than one Host header"};
      it->second += ", ";
      it->second += value;
    }
  }
  if (!http10 && !request.headers.count("host"))
    throw ProtocolError{400, "missing Host header (required by HTTP/1.1)"};

  if (auto te = request.headers.find("transfer-encoding"); te != request.headers.end()) {
    // 411 for chunked: we know the coding but only read Content-Length bodies, and 411 tells the
    // client exactly what to send instead (libcurl does when it knows the size). Any other coding is
    // one we do not implement: 501, as RFC 9112 §6.1 asks.
    auto codings = list_tokens(te->second);
    if (std::find(codings.begin(), codings.end(), "chunked") != codings.end())
      throw ProtocolError{411, "chunked request bodies are not supported: send Content-Length"};
    throw ProtocolError{501, "transfer coding '" + te->second + "' is not supported"};
  }
  if (auto cl = request.headers.find("content-length"); cl != request.headers.end()) {
    // Repeated fields (or a list) are legal only when every value is the same (RFC 9110 §8.6).
    auto values = list_tokens(cl->second);
    if (values.empty()) throw ProtocolError{400, "empty Content-Length"};
    for (const auto& v : values) {
      if (v != values[0] || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw ProtocolError{400, "malformed Content-Length '" + cl->second + "'"};
    }
    // More digits than fit: too large for any limit, reported as such.
    out.content_length = values[0].size() > 18 ? std::numeric_limits<std::size_t>::max()
                                               : static_cast<std::size_t>(std::stoull(values[0]));
  }
  if (auto ex = request.headers.find("expect"); ex != request.headers.end()) {
    if (lower(ex->second) != "100-continue")
      throw ProtocolError{417, "unsupported expectation '" + ex->second + "'"};
    out.expect_continue = !http10;  // RFC 9110 §10.1.1: ignore it from an HTTP/1.0 client
  }
  out.close = http10;
  if (auto conn = request.headers.find("connection"); conn != request.headers.end()) {
    auto options = list_tokens(conn->second);
    if (std::find(options.begin(), options.end(), "close") != options.end()) out.close = true;
  }
  return out;
}

bool header_value_ok(std::string_view v) {
  return std::none_of(v.begin(), v.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

/// A handler's response must not break the framing (header injection, impossible status).
void check_response(const HttpResponse& r) {
  if (r.status < 200 || r.status > 599)
    throw Error(kLib, "handler returned invalid status " + std::to_string(r.status));
  if (!header_value_ok(r.content_type)) throw Error(kLib, "handler returned an invalid Content-Type");
  for (const auto& [name, value] : r.headers)
    if (!is_token(name) || !header_value_ok(value))
      throw Error(kLib, "handler returned an invalid header '" + name + "'");
}

bool asks_to_close(const HttpResponse& r) {
  for (const auto& [name, value] : r.headers) {
    if (lower(name) != "connection") continue;
    auto options = list_tokens(value);
    if (std::find(options.begin(), options.end(), "close") != options.end()) return true;
  }
  return false;
}

std::string serialize(const HttpResponse& r, bool head_only, bool close) {
  // RFC 9110 §15.3.5, §15.4.5: 204 and 304 never have content; 204 must not carry Content-Length.
  bool no_content = r.status == 204 || r.status == 304;
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason_phrase(r.status) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\n";
  if (!no_content) out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  if (close) out += "Connection: close\r\n";
  for (const auto& [name, value] : r.headers) {
    std::string key = lower(name);
    if (key == "content-length" || key == "transfer-encoding" || key == "connection" || key == "content-type")
      continue;  // the server owns framing
    out += name + ": " + value + "\r\n";
  }
  out += "\r\n";
  if (!head_only && !no_content) out += r.body;
  return out;
}

enum class Wait { ready, timeout, stopping };

/// Waits until `fd` has `events` or the deadline passes; `stop_fd` (when >= 0) ends it at shutdown.
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

/// Sends everything, giving up after `timeout_s` without progress (a client that does not read).
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

std::string format_endpoint(const sockaddr_in& addr) {
  char ip[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
  return std::string(ip) + ":" + std::to_string(ntohs(addr.sin_port));
}

bool parse_ipv4(const std::string& host, in_addr& out) {
  if (host == "localhost") {
    out.s_addr = htonl(INADDR_LOOPBACK);
    return true;
  }
  return ::inet_pton(AF_INET, host.c_str(), &out) == 1;
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

}  // namespace

HttpResponse HttpResponse::json(int status, const std::string& body) {
  HttpResponse r;
  r.status = status;
  r.body = body;
  return r;
}

HttpResponse HttpResponse::text(int status, const std::string& body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = body;
  return r;
}

/// Writes a streamed response on one connection: the head with Transfer-Encoding: chunked, then
/// each piece as a chunk; finish() sends the last (empty) chunk.
class ChunkedWriter final : public HttpStreamWriter {
 public:
  ChunkedWriter(int fd, double timeout_s, bool head_only, bool close)
      : m_fd(fd), m_timeout_s(timeout_s), m_head_only(head_only), m_close(close) {}

  bool begin(int status, const std::string& content_type,
             const std::vector<std::pair<std::string, std::string>>& headers) override {
    if (m_begun) throw Error(kLib, "a streamed response was begun twice");
    HttpResponse r;
    r.status = status;
    r.content_type = content_type;
    r.headers = headers;
    check_response(r);
    m_begun = true;
    m_close = m_close || asks_to_close(r);
    std::string head = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\n";
    head += "Content-Type: " + content_type + "\r\n";
    head += "Transfer-Encoding: chunked\r\n";
    head += "Cache-Control: no-cache\r\n";
    if (m_close) head += "Connection: close\r\n";
    for (const auto& [name, value] : headers) {
      std::string key = lower(name);
      if (key == "content-length" || key == "transfer-encoding" || key == "connection" || key == "content-type" ||
          key == "cache-control")
        continue;  // the server owns framing
      head += name + ": " + value + "\r\n";
    }
    head += "\r\n";
    return send(head);
  }

  bool write(std::string_view data) override {
    if (!m_begun) throw Error(kLib, "write before begin on a streamed response");
    if (data.empty() || m_head_only) return !m_broken;
    char size[32];
    int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    std::string chunk(size, static_cast<std::size_t>(n));
    chunk.append(data);
    chunk += "\r\n";
    return send(chunk);
  }

  [[nodiscard]] bool begun() const noexcept override { return m_begun; }
  [[nodiscard]] bool broken() const noexcept { return m_broken; }
  [[nodiscard]] bool close() const noexcept { return m_close; }
  bool finish() { return m_head_only || send("0\r\n\r\n"); }

 private:
  bool send(std::string_view bytes) {
    if (m_broken) return false;
    if (!send_all(m_fd, bytes, m_timeout_s)) m_broken = true;
    return !m_broken;
  }

  int m_fd;
  double m_timeout_s;
  bool m_head_only;
  bool m_close;
  bool m_begun = false;
  bool m_broken = false;
};

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
  void linger_close(Connection& c);
  void enqueue(ConnectionPtr c);
  void park(ConnectionPtr c);
  void stop();

  enum class Read { data, eof, timeout, stopping };
  Read read_some(Connection& c, Clock::time_point deadline);
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

  s.listen_fd = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (s.listen_fd.get() < 0) throw Error(kLib, "socket: " + errno_text(errno));
  // Lets a restarted service rebind while old connections sit in TIME_WAIT; Linux still refuses a
  // port that another socket is listening on.
  int yes = 1;
  ::setsockopt(s.listen_fd.get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr = ip;
  addr.sin_port = htons(static_cast<std::uint16_t>(s.options.port));
  if (::bind(s.listen_fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    throw Error(kLib, "cannot listen on " + wanted + ": " + errno_text(err) +
                          (err == EADDRINUSE ? " (is another server running on this port?)" : ""));
  }
  if (::listen(s.listen_fd.get(), SOMAXCONN) != 0)
    throw Error(kLib, "cannot listen on " + wanted + ": " + errno_text(errno));
  socklen_t len = sizeof addr;
  if (::getsockname(s.listen_fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw Error(kLib, "getsockname: " + errno_text(errno));
  m_port = ntohs(addr.sin_port);
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr.sin_addr, text, sizeof text);
  s.bound_host = text;
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
        linger_close(*c);
        return;
      case Next::drop:
        return;
    }
  }
}

HttpServer::State::Read HttpServer::State::read_some(Connection& c, Clock::time_point deadline) {
  char chunk[kReadChunk];
  for (;;) {
    if (stopping) return Read::stopping;
    ssize_t n = ::recv(c.fd.get(), chunk, sizeof chunk, 0);
    if (n > 0) {
      c.buffer.append(chunk, static_cast<std::size_t>(n));
      return Read::data;
    }
    if (n == 0) return Read::eof;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return Read::eof;  // reset: nothing more will come
    switch (wait_for(c.fd.get(), POLLIN, deadline, stop_fd.get())) {
      case Wait::ready: continue;
      case Wait::timeout: return Read::timeout;
      case Wait::stopping: return Read::stopping;
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
    switch (read_some(c, deadline)) {
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
    switch (read_some(c, deadline)) {
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

void HttpServer::State::linger_close(Connection& c) {
  ::shutdown(c.fd.get(), SHUT_WR);
  auto deadline = Clock::now() + seconds(std::min(kLingerS, options.read_timeout_s));
  char chunk[kReadChunk];
  for (;;) {
    ssize_t n = ::recv(c.fd.get(), chunk, sizeof chunk, 0);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (wait_for(c.fd.get(), POLLIN, deadline, stop_fd.get()) == Wait::ready) continue;
    }
    return;  // peer closed, error, time up or shutting down
  }
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
