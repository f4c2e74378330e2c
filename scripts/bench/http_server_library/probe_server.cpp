// An HttpServer (either implementation, as run.sh links it) with the limits of
// tests/cpu/service/test_http_server.cpp, answering 200 to whatever reaches the handler; prints its
// port, then serves for two minutes. probe.py sends it malformed and oversized requests.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "service/http_server.h"

using namespace ptxbench;

int main() {
  HttpServerOptions o;
  o.threads = 8;
  o.max_header_bytes = 2048;
  o.max_body_bytes = 256 << 10;
  o.read_timeout_s = 0.5;
  o.idle_timeout_s = 5;
  HttpServer s(o, [](const HttpRequest& r) {
    return HttpResponse::json(200, nlohmann::json{{"path", r.path}, {"body_size", r.body.size()}}.dump());
  });
  s.start();
  std::printf("%d\n", s.port());
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::minutes(2));
}
