// The service's HTTP server over real sockets: routing and decoding, keep-alive and HTTP/1.0,
// 100-continue through curl, every client error (400/408/411/413/414/431/503), handler failures,
// concurrency, idle clients not starving workers, and prompt shutdown.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/error.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "service/http_server.h"

using namespace ptxbench;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
Clock::time_point after(double s) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

struct Reply {
  int status = 0;  // 0: the connection closed (or timed out) before a whole response
  std::map<std::string, std::string> headers;
  std::string body;
  [[nodiscard]] json body_json() const { return json::parse(body); }
};

/// A raw TCP client: sends bytes exactly as given, reads responses by their Content-Length.
class RawClient {
 public:
  explicit RawClient(int port) {
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(m_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error("connect failed");
  }
  ~RawClient() { ::close(m_fd); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool send(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::send(m_fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  /// One final response (1xx interim responses are skipped); status 0 on close or timeout.
  Reply read_response(bool head_request = false, double timeout_s = 5) {
    auto deadline = after(timeout_s);
    for (;;) {
      std::size_t end;
      while ((end = m_buffer.find("\r\n\r\n")) == std::string::npos)
        if (!fill(deadline)) return {};
      Reply r;
      std::string head = m_buffer.substr(0, end + 2);
      m_buffer.erase(0, end + 4);
      r.status = std::stoi(head.substr(9, 3));
      for (std::size_t pos = head.find("\r\n") + 2; pos < head.size();) {
        auto eol = head.find("\r\n", pos);
        std::string line = head.substr(pos, eol - pos);
        auto colon = line.find(':');
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
        pos = eol + 2;
      }
      if (r.status < 200) continue;
      std::size_t length = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
      if (head_request) length = 0;
      while (m_buffer.size() < length)
        if (!fill(deadline)) return {};
      r.body = m_buffer.substr(0, length);
      m_buffer.erase(0, length);
      return r;
    }
  }

  /// True when the server closes the connection within timeout_s (bytes sent meanwhile are kept).
  bool closed_within(double timeout_s) {
    auto deadline = after(timeout_s);
    for (;;) {
      switch (fill_or_eof(deadline)) {
        case 1: continue;
        case 0: return true;
        default: return false;
      }
    }
  }

  [[nodiscard]] const std::string& pending() const { return m_buffer; }

 private:
  bool fill(Clock::time_point deadline) { return fill_or_eof(deadline) == 1; }
  // 1: data, 0: closed (EOF or reset), -1: timed out.
  int fill_or_eof(Clock::time_point deadline) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return -1;
    pollfd p{m_fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return -1;
    char chunk[65536];
    ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
    if (n <= 0) return 0;
    m_buffer.append(chunk, static_cast<std::size_t>(n));
    return 1;
  }

  int m_fd = -1;
  std::string m_buffer;
};

std::string get(const std::string& target, const std::string& extra = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: test\r\n" + extra + "\r\n";
}

std::string post(const std::string& target, const std::string& body, const std::string& extra = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: test\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n" + extra + "\r\n" + body;
}

/// The test API: /echo reports what the server parsed, /throw fails, /block waits for release().
class TestApi {
 public:
  HttpResponse operator()(const HttpRequest& r) {
    if (r.path == "/throw") throw std::runtime_error("boom");
    if (r.path == "/block") {
      std::unique_lock lock(m_mutex);
      ++m_blocked;
      m_cv.notify_all();
      m_cv.wait(lock, [&] { return m_released; });
      return HttpResponse::json(200, R"({"released":true})");
    }
    if (r.path == "/text") return HttpResponse::text(200, "plain");
    if (r.path == "/big") return HttpResponse::text(200, std::string(16 << 20, 'b'));
    if (r.path == "/empty") return HttpResponse::json(204, "");
    if (r.path == "/close") {
      auto resp = HttpResponse::json(200, "{}");
      resp.headers.emplace_back("Connection", "close");
      return resp;
    }
    if (r.path.rfind("/echo", 0) == 0) {
      json j{{"method", r.method}, {"path", r.path}, {"query", r.query}, {"body", r.body},
             {"headers", r.headers}, {"remote", r.remote}};
      auto resp = HttpResponse::json(200, j.dump());
      resp.headers.emplace_back("X-Echo", "1");
      return resp;
    }
    return HttpResponse::json(404, R"({"error":"no such route"})");
  }
  void wait_blocked(int count) {
    std::unique_lock lock(m_mutex);
    m_cv.wait(lock, [&] { return m_blocked >= count; });
  }
  void release() {
    std::lock_guard lock(m_mutex);
    m_released = true;
    m_cv.notify_all();
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_cv;
  int m_blocked = 0;
  bool m_released = false;
};

HttpServerOptions test_options() {
  HttpServerOptions o;
  o.threads = 8;
  o.max_header_bytes = 2048;
  o.max_body_bytes = 256 << 10;
  o.read_timeout_s = 0.5;
  o.idle_timeout_s = 5;
  return o;
}

/// A started server on an ephemeral port serving a TestApi.
struct Served {
  explicit Served(HttpServerOptions o = test_options())
      : api(std::make_shared<TestApi>()), server(o, [api = api](const HttpRequest& r) { return (*api)(r); }) {
    server.start();
  }
  std::string url(const std::string& path) const { return "http://" + server.address() + path; }
  std::shared_ptr<TestApi> api;
  HttpServer server;
};

/// curl with the status appended as a last line "\n<code>"; returns {status, body}.
std::pair<int, std::string> curl(std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {"curl", "-sS", "--max-time", "5", "-w", "\n%{http_code}"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  auto r = run_process(spec, 10);
  EXPECT_TRUE(r.status.success()) << r.err.text;
  auto nl = r.out.text.rfind('\n');
  if (nl == std::string::npos) return {0, ""};
  return {std::stoi(r.out.text.substr(nl + 1)), r.out.text.substr(0, nl)};
}

void expect_error(const Reply& r, int status, const std::string& fragment) {
  EXPECT_EQ(r.status, status);
  EXPECT_EQ(r.headers.at("content-type"), "application/json");
  EXPECT_EQ(r.headers.at("connection"), "close");
  auto j = json::parse(r.body);
  ASSERT_TRUE(j.contains("error")) << r.body;
  EXPECT_NE(j["error"].get<std::string>().find(fragment), std::string::npos) << r.body;
}

}  // namespace

TEST(HttpServer, GetAndPostWithQueryAndBody) {
  Served s;
  RawClient c(s.server.port());
  c.send(get("/echo/a%20b?x=1+2&y=%41%2B&flag&=v"));
  auto r = c.read_response();
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "application/json");
  EXPECT_EQ(r.headers["x-echo"], "1");
  EXPECT_EQ(r.headers.count("connection"), 0u);
  auto j = r.body_json();
  EXPECT_EQ(j["method"], "GET");
  EXPECT_EQ(j["path"], "/echo/a b");
  EXPECT_EQ(j["query"], (json{{"x", "1 2"}, {"y", "A+"}, {"flag", ""}, {"", "v"}}));
  EXPECT_EQ(j["headers"]["host"], "test");
  EXPECT_EQ(j["remote"].get<std::string>().rfind("127.0.0.1:", 0), 0u);

  // Through curl: a JSON body, a custom header (lower-cased), percent-decoded path.
  auto [status, body] = curl({"-X", "POST", "-H", "Content-Type: application/json", "-H", "X-Trace-ID: Abc",
                              "--data-binary", R"({"k":[1,2]})", s.url("/echo/%7Bid%7D?q=%26")});
  ASSERT_EQ(status, 200);
  auto p = json::parse(body);
  EXPECT_EQ(p["method"], "POST");
  EXPECT_EQ(p["path"], "/echo/{id}");
  EXPECT_EQ(p["query"]["q"], "&");
  EXPECT_EQ(p["body"], R"({"k":[1,2]})");
  EXPECT_EQ(p["headers"]["x-trace-id"], "Abc");

  auto [missing, _] = curl({s.url("/nowhere")});
  EXPECT_EQ(missing, 404);
  auto text = curl({s.url("/text")});
  EXPECT_EQ(text.first, 200);
  EXPECT_EQ(text.second, "plain");
  // Any method reaches the handler; HEAD gets the headers of GET without the body.
  RawClient h(s.server.port());
  h.send("DELETE /echo HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(h.read_response().body_json()["method"], "DELETE");
  h.send("HEAD /text HTTP/1.1\r\nHost: t\r\n\r\n");
  auto head = h.read_response(/*head_request=*/true);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.headers["content-length"], "5");
  h.send(get("/empty"));  // 204: no body, no Content-Length, connection still usable
  auto empty = h.read_response();
  EXPECT_EQ(empty.status, 204);
  EXPECT_EQ(empty.headers.count("content-length"), 0u);
  h.send(get("/text"));
  EXPECT_EQ(h.read_response().body, "plain");
}

TEST(HttpServer, KeepAliveAndPipelining) {
  Served s;
  RawClient c(s.server.port());
  c.send(post("/echo", "first"));
  EXPECT_EQ(c.read_response().body_json()["body"], "first");
  c.send(post("/echo", "second"));
  EXPECT_EQ(c.read_response().body_json()["body"], "second");
  // Two requests in one packet, and stray CRLFs between requests (allowed by RFC 9112 §2.2).
  c.send(get("/echo?n=1") + "\r\n" + get("/echo?n=2"));
  EXPECT_EQ(c.read_response().body_json()["query"]["n"], "1");
  EXPECT_EQ(c.read_response().body_json()["query"]["n"], "2");
  // Connection: close from the client, then the server closes.
  c.send(get("/echo", "Connection: close\r\n"));
  auto last = c.read_response();
  EXPECT_EQ(last.status, 200);
  EXPECT_EQ(last.headers["connection"], "close");
  EXPECT_TRUE(c.closed_within(2));

  // A handler can close the connection too.
  RawClient d(s.server.port());
  d.send(get("/close"));
  EXPECT_EQ(d.read_response().headers["connection"], "close");
  EXPECT_TRUE(d.closed_within(2));
}

TEST(HttpServer, Http10ClosesAfterTheResponse) {
  Served s;
  RawClient c(s.server.port());
  c.send("GET /echo HTTP/1.0\r\n\r\n");  // no Host needed in 1.0
  auto r = c.read_response();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["connection"], "close");
  EXPECT_TRUE(c.closed_within(2));
}

TEST(HttpServer, ExpectContinueWithCurl) {
  Served s;
  TempDir dir("ptxb_http");
  std::string body(64 << 10, 'x');
  for (std::size_t i = 0; i < body.size(); i += 97) body[i] = static_cast<char>('a' + i % 26);
  auto file = dir.path() / "body.bin";
  std::ofstream(file, std::ios::binary) << body;
  // Told to wait 30 s for "100 Continue" (--max-time is 5 s), curl succeeds only when the server
  // answers the expectation.
  auto [status, out] = curl({"--expect100-timeout", "30", "-H", "Expect: 100-continue", "--data-binary",
                             "@" + file.string(), s.url("/echo")});
  ASSERT_EQ(status, 200);
  auto j = json::parse(out);
  EXPECT_EQ(j["headers"]["expect"], "100-continue");
  EXPECT_EQ(j["body"], body);

  // Over the limit: 413 instead of 100, so curl never sends the body.
  std::string big((256 << 10) + 1, 'y');
  std::ofstream(dir.path() / "big.bin", std::ios::binary) << big;
  auto [too_big, err] =
      curl({"-H", "Expect: 100-continue", "--data-binary", "@" + (dir.path() / "big.bin").string(), s.url("/echo")});
  EXPECT_EQ(too_big, 413);
  EXPECT_NE(err.find("exceeds the limit"), std::string::npos) << err;
}

TEST(HttpServer, MalformedRequestsGet400) {
  Served s;
  struct Case {
    std::string request;
    int status;
    std::string fragment;
  };
  std::vector<Case> cases = {
      {"GARBAGE\r\n\r\n", 400, "malformed request line"},
      {"GET /\r\nHost: t\r\n\r\n", 400, "malformed request line"},
      {"GET  / HTTP/1.1\r\nHost: t\r\n\r\n", 400, "malformed request line"},
      {"GET / HTTP/1.1 extra\r\nHost: t\r\n\r\n", 400, "malformed request line"},
      {"G(T / HTTP/1.1\r\nHost: t\r\n\r\n", 400, "malformed request line"},
      {"GET / HTTX/1.1\r\nHost: t\r\n\r\n", 400, "HTTP version"},
      {"GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505, "HTTP/1.0 and HTTP/1.1"},
      {"GET nope HTTP/1.1\r\nHost: t\r\n\r\n", 400, "request target"},
      {"GET /a%zz HTTP/1.1\r\nHost: t\r\n\r\n", 400, "percent-encoding"},
      {"GET /?a=%4 HTTP/1.1\r\nHost: t\r\n\r\n", 400, "percent-encoding"},
      {"GET / HTTP/1.1\r\n\r\n", 400, "missing Host"},
      {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "Host"},
      {"GET / HTTP/1.1\r\nHost: t\r\nBad Name: x\r\n\r\n", 400, "malformed header"},
      {"GET / HTTP/1.1\r\nHost: t\r\nNoColon\r\n\r\n", 400, "malformed header"},
      {"GET / HTTP/1.1\r\nHost : t\r\n\r\n", 400, "malformed header"},
      {"GET / HTTP/1.1\r\nHost: t\r\nX: a\r\n folded\r\n\r\n", 400, "folding"},
      {"GET / HTTP/1.1\r\nHost: t\r\nX: a\x01\r\n\r\n", 400, "invalid character"},
      {"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 12x\r\n\r\n", 400, "Content-Length"},
      {"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400, "Content-Length"},
      {"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411, "send Content-Length"},
      {"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "gzip"},
      {"POST / HTTP/1.1\r\nHost: t\r\nExpect: magic\r\nContent-Length: 1\r\n\r\nx", 417, "magic"},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.request);
    RawClient c(s.server.port());
    c.send(k.request);
    expect_error(c.read_response(), k.status, k.fragment);
    EXPECT_TRUE(c.closed_within(2));
  }
  // Bare-LF line ends are accepted (RFC 9112 §2.2), and the server is still fine after all that.
  RawClient ok(s.server.port());
  ok.send("GET /echo HTTP/1.1\nHost: t\n\n");
  EXPECT_EQ(ok.read_response().status, 200);
}

TEST(HttpServer, OversizeHeadersAndBody) {
  Served s;  // max_header_bytes 2048, max_body_bytes 256 KiB
  {
    RawClient c(s.server.port());
    c.send(get("/echo", "X-Big: " + std::string(3000, 'a') + "\r\n"));
    expect_error(c.read_response(), 431, "larger than 2048");
  }
  {
    RawClient c(s.server.port());  // many small fields, each fine, together over the limit
    std::string fields;
    for (int i = 0; i < 300; ++i) fields += "X-" + std::to_string(i) + ": v\r\n";
    c.send(get("/echo", fields));
    auto r = c.read_response();
    EXPECT_EQ(r.status, 431);
  }
  {
    RawClient c(s.server.port());
    c.send("GET /" + std::string(4000, 'a'));  // no line end yet
    expect_error(c.read_response(), 414, "request line");
  }
  {
    // Refused from the head alone: the server does not wait for (or read) a gigabyte.
    RawClient c(s.server.port());
    auto start = Clock::now();
    c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000000\r\n\r\n");
    expect_error(c.read_response(), 413, "exceeds the limit of 262144 bytes");
    EXPECT_LT(since(start), 0.4);
  }
  {
    RawClient c(s.server.port());
    c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999999999999999999\r\n\r\n");
    EXPECT_EQ(c.read_response().status, 413);
  }
  // Exactly at the limit is fine.
  RawClient c(s.server.port());
  c.send(post("/echo", std::string(256 << 10, 'z')));
  auto r = c.read_response();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body_json()["body"].get<std::string>().size(), 256u << 10);
}

TEST(HttpServer, StalledClientsAreClosedAfterTheReadTimeout) {
  Served s;  // read_timeout_s 0.5
  RawClient half(s.server.port());
  RawClient half_body(s.server.port());
  RawClient silent(s.server.port());
  auto start = Clock::now();
  // Slowloris: a byte every 50 ms keeps the connection alive, but the whole request has a deadline.
  auto dribbler = std::async(std::launch::async, [&] {
    RawClient c(s.server.port());
    std::string request = get("/echo", "X-Pad: " + std::string(100, 'p') + "\r\n");
    for (char ch : request) {
      if (!c.send(std::string(1, ch))) break;
      if (c.closed_within(0.05)) break;
    }
    return c.pending();
  });
  half.send("GET /echo HTTP/1.1\r\nHost: t\r\n");  // head never finished
  half_body.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly part");
  expect_error(half.read_response(), 408, "not received within");
  expect_error(half_body.read_response(), 408, "body not received");
  EXPECT_TRUE(half.closed_within(2));
  EXPECT_TRUE(silent.closed_within(2));  // never sent a byte: closed without a reply
  EXPECT_TRUE(silent.pending().empty());
  std::string dribbled = dribbler.get();
  EXPECT_EQ(dribbled.rfind("HTTP/1.1 408", 0), 0u) << dribbled;
  double waited = since(start);
  EXPECT_GT(waited, 0.4);
  EXPECT_LT(waited, 2.0);  // 0.5 s, plus slack for a loaded CI host
  // A slow client does not spoil the server for others.
  RawClient ok(s.server.port());
  ok.send(get("/echo"));
  EXPECT_EQ(ok.read_response().status, 200);
}

TEST(HttpServer, HandlerExceptionBecomes500AndServingGoesOn) {
  Served s;
  RawClient c(s.server.port());
  c.send(get("/throw"));
  auto r = c.read_response();
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body_json()["error"], "boom");
  c.send(get("/echo?after=throw"));  // same connection
  auto next = c.read_response();
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(next.body_json()["query"]["after"], "throw");

  // A response that would break the framing is the handler's bug: 500, not header injection.
  HttpServer bad({}, [](const HttpRequest&) {
    auto resp = HttpResponse::json(200, "{}");
    resp.headers.emplace_back("X-Evil", "a\r\nSet-Cookie: x=1");
    return resp;
  });
  bad.start();
  auto [status, body] = curl({"http://" + bad.address() + "/"});
  EXPECT_EQ(status, 500);
  EXPECT_NE(body.find("invalid header"), std::string::npos);
}

TEST(HttpServer, ClientVanishingMidResponseDoesNotKillTheProcess) {
  // SIGPIPE keeps its default action (terminate) here, so a send without MSG_NOSIGNAL would end
  // the test binary.
  auto previous = std::signal(SIGPIPE, SIG_DFL);
  Served s;
  for (int i = 0; i < 3; ++i) {
    RawClient c(s.server.port());
    c.send(get("/big"));  // 16 MiB: more than the socket buffers, so the server sends repeatedly
  }  // closed at once: the server's later sends hit a reset connection
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  RawClient c(s.server.port());
  c.send(get("/echo"));
  EXPECT_EQ(c.read_response().status, 200);
  std::signal(SIGPIPE, previous);
}

TEST(HttpServer, ManyConcurrentClients) {
  Served s;  // 8 workers for 32 clients: connections queue, and idle keep-alive ones free workers
  constexpr int kClients = 32, kRequests = 20;
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      // Even clients keep one connection; odd ones connect per request.
      std::unique_ptr<RawClient> c;
      for (int k = 0; k < kRequests; ++k) {
        if (!c || i % 2) c = std::make_unique<RawClient>(s.server.port());
        std::string body = std::to_string(i) + ":" + std::to_string(k);
        c->send(post("/echo?i=" + std::to_string(i), body));
        auto r = c->read_response();
        if (r.status == 200 && r.body_json()["body"] == body) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), kClients * kRequests);
}

TEST(HttpServer, IdleKeepAliveConnectionsDoNotHoldWorkers) {
  auto o = test_options();
  o.threads = 1;
  Served s(o);
  RawClient idle1(s.server.port()), idle2(s.server.port());
  idle1.send(get("/echo"));
  EXPECT_EQ(idle1.read_response().status, 200);
  idle2.send(get("/echo"));
  EXPECT_EQ(idle2.read_response().status, 200);
  // Both stay open and idle; the single worker still serves a third client at once.
  auto start = Clock::now();
  RawClient third(s.server.port());
  third.send(get("/echo"));
  EXPECT_EQ(third.read_response().status, 200);
  EXPECT_LT(since(start), 2.0);  // a worker held by an idle connection would need idle_timeout_s (5 s)
  idle1.send(get("/echo?again=1"));  // and the idle ones still work
  EXPECT_EQ(idle1.read_response().status, 200);
}

TEST(HttpServer, IdleTimeoutClosesKeepAliveConnections) {
  auto o = test_options();
  o.idle_timeout_s = 0.3;
  Served s(o);
  RawClient c(s.server.port());
  c.send(get("/echo"));
  EXPECT_EQ(c.read_response().status, 200);
  auto start = Clock::now();
  EXPECT_TRUE(c.closed_within(2));
  EXPECT_GT(since(start), 0.2);
}

TEST(HttpServer, FullQueueGets503) {
  auto o = test_options();
  o.threads = 1;
  o.max_waiting_connections = 1;
  o.read_timeout_s = 5;
  Served s(o);
  RawClient busy(s.server.port());
  busy.send(get("/block"));
  s.api->wait_blocked(1);  // the only worker is taken
  RawClient waiting(s.server.port());
  waiting.send(get("/echo?queued=1"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the accept thread take it
  RawClient rejected(s.server.port());
  auto r = rejected.read_response();
  expect_error(r, 503, "busy");
  EXPECT_EQ(r.headers["retry-after"], "1");
  s.api->release();
  EXPECT_EQ(busy.read_response().status, 200);
  EXPECT_EQ(waiting.read_response().body_json()["query"]["queued"], "1");
}

TEST(HttpServer, StopIsPromptAndIdempotent) {
  auto o = test_options();
  o.read_timeout_s = 10;
  o.idle_timeout_s = 30;
  Served s(o);
  RawClient idle(s.server.port());
  idle.send(get("/echo"));
  EXPECT_EQ(idle.read_response().status, 200);
  RawClient half(s.server.port());
  half.send("GET /echo HTTP/1.1\r\nHost");
  RawClient silent(s.server.port());
  RawClient blocked(s.server.port());
  blocked.send(get("/block"));
  s.api->wait_blocked(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // everyone has been accepted

  // stop() waits for the running handler: release it shortly after stop() starts.
  auto start = Clock::now();
  auto releaser = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    s.api->release();
  });
  s.server.stop();
  double took = since(start);
  EXPECT_GT(took, 0.09);
  EXPECT_LT(took, 1.0);
  auto last = blocked.read_response();
  EXPECT_EQ(last.status, 200);
  EXPECT_EQ(last.headers["connection"], "close");
  EXPECT_TRUE(blocked.closed_within(1));
  EXPECT_TRUE(idle.closed_within(1));
  EXPECT_TRUE(half.closed_within(1));
  EXPECT_TRUE(silent.closed_within(1));

  start = Clock::now();
  s.server.stop();  // idempotent, and the destructor will call it a third time
  EXPECT_LT(since(start), 0.1);
  EXPECT_THROW(s.server.start(), Error);
  EXPECT_THROW(RawClient{s.server.port()}, std::runtime_error);  // nobody listens any more

  // A server never started stops at once too.
  HttpServer unstarted({}, [](const HttpRequest&) { return HttpResponse::json(200, "{}"); });
  unstarted.stop();
}

TEST(HttpServer, BindingAPortInUseThrowsAClearError) {
  HttpServer first({}, [](const HttpRequest&) { return HttpResponse::json(200, "{}"); });
  HttpServerOptions o;
  o.port = first.port();
  try {
    HttpServer second(o, [](const HttpRequest&) { return HttpResponse::json(200, "{}"); });
    FAIL() << "bound a port already in use";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_EQ(e.library(), "http");
    EXPECT_NE(what.find("127.0.0.1:" + std::to_string(first.port())), std::string::npos) << what;
    EXPECT_NE(what.find("in use"), std::string::npos) << what;
  }
  HttpServerOptions local;
  local.host = "localhost";
  HttpServer third(local, [](const HttpRequest&) { return HttpResponse::json(200, "{}"); });
  EXPECT_EQ(third.address(), "127.0.0.1:" + std::to_string(third.port()));
  HttpServerOptions bad_host;
  bad_host.host = "example.com";
  EXPECT_THROW(HttpServer(bad_host, [](const HttpRequest&) { return HttpResponse{}; }), InputError);
  HttpServerOptions no_threads;
  no_threads.threads = 0;
  EXPECT_THROW(HttpServer(no_threads, [](const HttpRequest&) { return HttpResponse{}; }), InputError);
}

TEST(HttpServer, ParseListenAddress) {
  EXPECT_EQ(parse_listen_address("127.0.0.1:8080"), std::make_pair(std::string("127.0.0.1"), 8080));
  EXPECT_EQ(parse_listen_address("0.0.0.0:65535"), std::make_pair(std::string("0.0.0.0"), 65535));
  EXPECT_EQ(parse_listen_address("localhost:0"), std::make_pair(std::string("localhost"), 0));
  for (const char* bad : {"", "8080", "127.0.0.1", ":8080", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
                          "127.0.0.1:80x", "127.0.0.1:123456", "256.1.1.1:80", "1.2.3:80", "[::1]:80",
                          "::1:80", "example.com:80", "127.0.0.1:80 ", " 127.0.0.1:80"}) {
    SCOPED_TRACE(bad);
    try {
      parse_listen_address(bad);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("listen address"), std::string::npos);
    }
  }
}
