// The HttpServer of src/service/http_server.h ported onto Debian 12's cpp-httplib 0.11 (package
// libcpp-httplib-dev), kept only to measure it against our own server (results/http_server_library.md;
// run.sh builds it beside the real one, nothing else does). Same interface, same option checks;
// what cpp-httplib cannot express is noted where it falls short.
#include "service/http_server.h"

#include <arpa/inet.h>
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/error.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "http";

std::string error_body(const std::string& message) {
  return nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
  return s;
}

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool header_value_ok(std::string_view v) {
  return std::none_of(v.begin(), v.end(), [](char c) { return c == '\r' || c == '\n' || c == '\0'; });
}

void check_response(const HttpResponse& r) {
  if (r.status < 200 || r.status > 599) throw Error(kLib, "handler returned invalid status " + std::to_string(r.status));
  if (!header_value_ok(r.content_type)) throw Error(kLib, "handler returned an invalid Content-Type");
  for (const auto& [name, value] : r.headers)
    if (name.empty() || !std::all_of(name.begin(), name.end(), is_tchar) || !header_value_ok(value))
      throw Error(kLib, "handler returned an invalid header '" + name + "'");
}

bool is_framing(const std::string& name) {
  std::string key = lower(name);
  return key == "content-length" || key == "transfer-encoding" || key == "content-type";
}

bool parse_ipv4(const std::string& host, std::string& out) {
  if (host == "localhost") {
    out = "127.0.0.1";
    return true;
  }
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) != 1) return false;
  out = host;
  return true;
}

HttpRequest to_request(const httplib::Request& in) {
  HttpRequest r;
  r.method = in.method;
  r.path = in.path;  // cpp-httplib percent-decodes it
  for (const auto& [k, v] : in.params) r.query[k] = v;
  for (const auto& [k, v] : in.headers) {
    auto [it, inserted] = r.headers.emplace(lower(k), v);
    if (!inserted) it->second += ", " + v;
  }
  r.body = in.body;
  r.remote = in.remote_addr + ":" + std::to_string(in.remote_port);
  return r;
}

void fill(httplib::Response& out, const HttpResponse& r) {
  out.status = r.status;
  for (const auto& [name, value] : r.headers)
    if (!is_framing(name)) out.set_header(name, value);
  out.set_content(r.body, r.content_type);
}

/// A streamed response: the handler runs on a thread of its own and hands chunks over a queue to
/// cpp-httplib's chunked content provider, which pulls them on the connection's thread (cpp-httplib
/// writes the head only after the route handler returned, so the handler cannot write directly).
struct Stream final : HttpStreamWriter {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::string> chunks;
  bool begun_flag = false, finished = false, broken = false;
  int status = 200;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<HttpResponse> whole;
  std::exception_ptr failure;

  bool begin(int s, const std::string& type, const std::vector<std::pair<std::string, std::string>>& h) override {
    HttpResponse r;
    r.status = s;
    r.content_type = type;
    r.headers = h;
    check_response(r);
    std::lock_guard lock(mutex);
    if (begun_flag) throw Error(kLib, "a streamed response was begun twice");
    begun_flag = true;
    status = s;
    content_type = type;
    headers = h;
    cv.notify_all();
    return !broken;
  }
  bool write(std::string_view data) override {
    std::unique_lock lock(mutex);
    if (!begun_flag) throw Error(kLib, "write before begin on a streamed response");
    if (broken) return false;
    if (data.empty()) return true;
    chunks.emplace_back(data);
    cv.notify_all();
    cv.wait(lock, [&] { return chunks.empty() || broken; });  // sent (or never will be), as our server's write
    return !broken;
  }
  [[nodiscard]] bool begun() const noexcept override { return begun_flag; }
};

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

/// What a handler that cannot stream gets: HttpServer(options, HttpHandler) never calls it.
struct NoStream final : HttpStreamWriter {
  bool begin(int, const std::string&, const std::vector<std::pair<std::string, std::string>>&) override {
    throw Error(kLib, "this handler does not stream");
  }
  bool write(std::string_view) override { throw Error(kLib, "this handler does not stream"); }
  [[nodiscard]] bool begun() const noexcept override { return false; }
};

struct HttpServer::State {
  HttpServerOptions options;
  StreamingHttpHandler handler;
  bool may_stream = true;  // false: the handler is a plain HttpHandler, called on the connection's thread
  std::string host;
  httplib::Server server;
  std::thread listener;
  std::mutex lifecycle_mutex;
  bool started = false, stopped = false;

  void serve(const httplib::Request& in, httplib::Response& out);
};

void HttpServer::State::serve(const httplib::Request& in, httplib::Response& out) {
  HttpRequest request = to_request(in);
  if (!may_stream) {
    NoStream none;
    std::optional<HttpResponse> r = handler(request, none);
    check_response(*r);
    fill(out, *r);
    return;
  }
  auto stream = std::make_shared<Stream>();
  // The handler runs on its own thread; this one waits until it returns or begins a stream.
  std::thread worker([this, stream, request = std::move(request)] {
    std::optional<HttpResponse> r;
    std::exception_ptr failure;
    try {
      r = handler(request, *stream);
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard lock(stream->mutex);
    stream->whole = std::move(r);
    stream->failure = failure;
    stream->finished = true;
    stream->cv.notify_all();
  });
  std::unique_lock lock(stream->mutex);
  stream->cv.wait(lock, [&] { return stream->finished || stream->begun_flag; });
  if (!stream->begun_flag) {
    lock.unlock();
    worker.join();
    if (stream->failure) std::rethrow_exception(stream->failure);
    if (!stream->whole) throw Error(kLib, "handler returned no response and streamed none");
    check_response(*stream->whole);
    fill(out, *stream->whole);
    return;
  }
  out.status = stream->status;
  for (const auto& [name, value] : stream->headers)
    if (!is_framing(name)) out.set_header(name, value);
  out.set_header("Cache-Control", "no-cache");
  auto thread = std::make_shared<std::thread>(std::move(worker));
  out.set_chunked_content_provider(
      stream->content_type,
      [stream](std::size_t, httplib::DataSink& sink) {
        std::unique_lock l(stream->mutex);
        stream->cv.wait(l, [&] { return !stream->chunks.empty() || stream->finished; });
        while (!stream->chunks.empty()) {
          std::string chunk = std::move(stream->chunks.front());
          stream->chunks.pop_front();
          l.unlock();
          bool ok = sink.write(chunk.data(), chunk.size());
          l.lock();
          if (!ok) {
            stream->broken = true;
            stream->chunks.clear();
            stream->cv.notify_all();
            return false;
          }
        }
        stream->cv.notify_all();
        if (stream->finished) {
          if (stream->failure) return false;  // drop the connection: a broken body, not a short one
          sink.done();
        }
        return true;
      },
      [stream, thread](bool) {
        {
          std::lock_guard l(stream->mutex);
          stream->broken = true;
          stream->chunks.clear();
          stream->cv.notify_all();
        }
        if (thread->joinable()) thread->join();
      });
}

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : HttpServer(std::move(options), handler ? StreamingHttpHandler([h = std::move(handler)](const HttpRequest& r,
                                                                                             HttpStreamWriter&) {
      return std::optional<HttpResponse>(h(r));
    })
                                             : StreamingHttpHandler()) {
  m_state->may_stream = false;
}

HttpServer::HttpServer(HttpServerOptions options, StreamingHttpHandler handler) : m_state(std::make_unique<State>()) {
  if (options.threads < 1 || options.threads > 4096)
    throw InputError(kLib, "threads must be 1-4096, got " + std::to_string(options.threads));
  if (options.port < 0 || options.port > 65535)
    throw InputError(kLib, "port must be 0-65535, got " + std::to_string(options.port));
  if (!(options.read_timeout_s > 0) || !(options.idle_timeout_s > 0))
    throw InputError(kLib, "read and idle timeouts must be positive");
  if (options.max_header_bytes < 64 || options.max_waiting_connections < 1)
    throw InputError(kLib, "max_header_bytes must be >= 64 and max_waiting_connections >= 1");
  if (!handler) throw InputError(kLib, "no handler");
  State& s = *m_state;
  if (!parse_ipv4(options.host, s.host))
    throw InputError(kLib, "bind address '" + options.host + "' is not an IPv4 address or 'localhost'");
  s.options = std::move(options);
  s.handler = std::move(handler);
  auto& svr = s.server;
  int threads = s.options.threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  svr.set_address_family(AF_INET);
  svr.set_tcp_nodelay(true);
  svr.set_payload_max_length(s.options.max_body_bytes);
  auto sec = [](double v) { return static_cast<time_t>(v); };
  auto usec = [](double v) { return static_cast<time_t>((v - static_cast<double>(static_cast<time_t>(v))) * 1e6); };
  svr.set_read_timeout(sec(s.options.read_timeout_s), usec(s.options.read_timeout_s));
  svr.set_write_timeout(sec(s.options.read_timeout_s), usec(s.options.read_timeout_s));
  // Whole seconds only: 0.3 s becomes 1 s.
  svr.set_keep_alive_timeout(std::max<time_t>(1, static_cast<time_t>(std::ceil(s.options.idle_timeout_s))));
  svr.set_keep_alive_max_count(std::numeric_limits<std::size_t>::max());
  // Not expressible: max_header_bytes (fixed at 8192 per line when Debian built the library),
  // max_waiting_connections (the thread pool's queue is unbounded).
  auto route = [&s](const httplib::Request& in, httplib::Response& out) { s.serve(in, out); };
  for (auto add : {&httplib::Server::Get, &httplib::Server::Put, &httplib::Server::Patch, &httplib::Server::Delete})
    (svr.*add)(".*", route);
  svr.Post(".*", httplib::Server::Handler(route));
  svr.Options(".*", route);
  svr.set_exception_handler([](const httplib::Request&, httplib::Response& out, std::exception_ptr ep) {
    std::string what = "handler threw a non-standard exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    out.status = 500;
    out.set_content(error_body(what), "application/json");
  });
  svr.set_error_handler([](const httplib::Request&, httplib::Response& out) {
    if (out.body.empty()) out.set_content(error_body("HTTP " + std::to_string(out.status)), "application/json");
  });
  std::string wanted = s.host + ":" + std::to_string(s.options.port);
  if (s.options.port == 0) {
    m_port = svr.bind_to_any_port(s.host);
    if (m_port < 0) throw Error(kLib, "cannot listen on " + wanted);
  } else {
    if (!svr.bind_to_port(s.host, s.options.port))
      throw Error(kLib, "cannot listen on " + wanted + " (address in use, or not this host's)");
    m_port = s.options.port;
  }
}

HttpServer::~HttpServer() { stop(); }

std::string HttpServer::address() const { return m_state->host + ":" + std::to_string(m_port); }

void HttpServer::start() {
  State& s = *m_state;
  std::lock_guard lock(s.lifecycle_mutex);
  if (s.stopped) throw Error(kLib, "start() after stop(): create a new server");
  if (s.started) return;
  s.started = true;
  s.listener = std::thread([&s] { s.server.listen_after_bind(); });
  while (!s.server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void HttpServer::stop() {
  State& s = *m_state;
  std::lock_guard lock(s.lifecycle_mutex);
  if (s.stopped) return;
  s.stopped = true;
  s.server.stop();
  if (s.listener.joinable()) s.listener.join();
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
  std::string ip;
  if (!parse_ipv4(host, ip)) throw fail("host '" + host + "' is not an IPv4 address or 'localhost'");
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw fail("port must be a number 0-65535");
  int value = std::stoi(port);
  if (value > 65535) throw fail("port must be a number 0-65535");
  return {host, value};
}

}  // namespace ptxbench
