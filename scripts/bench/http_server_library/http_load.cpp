// Load on an HttpServer (src/service/http_server.h), in one process: the server with THREADS
// workers (default 64, as `ptxbench serve`) and a handler shaped like the service's cheap routes,
// and CLIENTS client threads that send REQUESTS each. MODE: `keepalive`, one connection per client
// opened when the clock starts; `warm`, the same opened (and used once) before it; `close`, a new
// connection per request. IDLE keep-alive connections, each used once, stay open and silent
// meanwhile (agents between two model calls). Prints one JSON line: throughput and latency
// quantiles. Built by run.sh against either implementation.
//   http_load CLIENTS REQUESTS MODE [IDLE] [THREADS]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "service/http_server.h"

using namespace ptxbench;
using Clock = std::chrono::steady_clock;

namespace {

/// GET /v1/evaluations/ID answers a task record; POST /v1/evaluations parses the JSON body and
/// answers 202, as the service's API does, minus the queue.
HttpResponse handle(const HttpRequest& r) {
  if (r.method == "POST" && r.path == "/v1/evaluations") {
    auto body = nlohmann::json::parse(r.body);
    return HttpResponse::json(202, nlohmann::json{{"id", "t-" + std::to_string(body["n"].get<int>())}, {"state", "queued"}}.dump());
  }
  if (r.method == "GET" && r.path.rfind("/v1/evaluations/", 0) == 0) {
    nlohmann::json j{{"id", r.path.substr(16)}, {"state", "done"}, {"attempts", 1}, {"worker", "gpu0"},
                     {"status", "PASSED"}, {"verdict", {{"status", "PASSED"}, {"speedup", 0.77}, {"message", std::string(200, 'm')}}}};
    return HttpResponse::json(200, j.dump());
  }
  return HttpResponse::json(404, R"({"error":"no such route"})");
}

class Connection {
 public:
  explicit Connection(int port) {
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    m_ok = ::connect(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Connection() { ::close(m_fd); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Sends one request and reads the response; its status, or 0 when the connection failed.
  int exchange(const std::string& request) {
    if (!m_ok) return 0;
    for (std::size_t done = 0; done < request.size();) {
      ssize_t n = ::send(m_fd, request.data() + done, request.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return 0;
      done += static_cast<std::size_t>(n);
    }
    std::size_t end;
    while ((end = m_buffer.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return 0;
    std::string head = m_buffer.substr(0, end);
    int status = std::stoi(head.substr(9, 3));
    std::size_t length = 0;
    std::string lower = head;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (auto at = lower.find("content-length:"); at != std::string::npos) length = std::stoul(head.substr(at + 15));
    while (m_buffer.size() < end + 4 + length)
      if (!fill()) return 0;
    m_buffer.erase(0, end + 4 + length);
    return status;
  }

 private:
  bool fill() {
    char chunk[16384];
    ssize_t n = ::recv(m_fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    m_buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  int m_fd = -1;
  bool m_ok = false;
  std::string m_buffer;
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s CLIENTS REQUESTS keepalive|warm|close [IDLE] [THREADS]\n", argv[0]);
    return 2;
  }
  int clients = std::stoi(argv[1]), requests = std::stoi(argv[2]);
  std::string mode = argv[3];
  bool keepalive = mode != "close", warm = mode == "warm";
  int idle = argc > 4 ? std::stoi(argv[4]) : 0;
  HttpServerOptions o;
  o.threads = argc > 5 ? std::stoi(argv[5]) : 64;  // `ptxbench serve`'s default
  HttpServer server(o, handle);
  server.start();
  int port = server.port();
  const std::string probe = "GET /v1/evaluations/t-0 HTTP/1.1\r\nHost: b\r\n\r\n";
  std::vector<std::unique_ptr<Connection>> idlers;
  for (int i = 0; i < idle; ++i) {
    idlers.push_back(std::make_unique<Connection>(port));
    if (idlers.back()->exchange(probe) != 200) std::fprintf(stderr, "idle connection %d failed\n", i);
  }
  std::atomic<int> ready{0};

  std::vector<std::vector<double>> latency(static_cast<std::size_t>(clients));
  std::atomic<int> failed{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto& mine = latency[static_cast<std::size_t>(c)];
      mine.reserve(static_cast<std::size_t>(requests));
      std::unique_ptr<Connection> conn;
      if (warm) {
        conn = std::make_unique<Connection>(port);
        conn->exchange(probe);
      }
      ++ready;
      while (!go) std::this_thread::yield();
      for (int i = 0; i < requests; ++i) {
        std::string close = keepalive ? "" : "Connection: close\r\n";
        std::string req;
        if (i % 4 == 0) {  // one submission for three status reads, as a polling client does
          std::string body = R"({"definition":"gemm_n7168_k5120","n":)" + std::to_string(i) + R"(,"source":")" +
                             std::string(2000, 's') + "\"}";
          req = "POST /v1/evaluations HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\n" + close +
                "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
        } else {
          req = "GET /v1/evaluations/t-" + std::to_string(i) + " HTTP/1.1\r\nHost: b\r\n" + close + "\r\n";
        }
        auto t0 = Clock::now();
        if (!conn || !keepalive) conn = std::make_unique<Connection>(port);
        int status = conn->exchange(req);
        mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (status != 200 && status != 202) {
          ++failed;
          conn.reset();
        }
      }
    });
  }
  while (ready < clients) std::this_thread::yield();
  auto start = Clock::now();
  go = true;
  for (auto& t : threads) t.join();
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  idlers.clear();
  server.stop();
  std::vector<double> all;
  for (auto& v : latency) all.insert(all.end(), v.begin(), v.end());
  nlohmann::json out{{"clients", clients},
                     {"requests", all.size()},
                     {"mode", mode},
                     {"idle_connections", idle},
                     {"server_threads", o.threads},
                     {"failed", failed.load()},
                     {"wall_s", wall},
                     {"requests_per_s", static_cast<double>(all.size()) / wall},
                     {"p50_ms", quantile(all, 0.5)},
                     {"p95_ms", quantile(all, 0.95)},
                     {"p99_ms", quantile(all, 0.99)},
                     {"max_ms", quantile(all, 1.0)}};
  std::printf("%s\n", out.dump().c_str());
  return failed.load() == 0 ? 0 : 1;
}
