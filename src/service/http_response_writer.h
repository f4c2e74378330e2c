// Writing HTTP/1.1 responses: a whole response as bytes, or a streamed one in chunks, with the
// server owning the framing (status line, Content-Length or Transfer-Encoding, Connection).
// Internal to src/service/http_*.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "service/http_server.h"

namespace ptxbench::http {

/// "Not Found" for 404; a class name ("Client Error") for a code without its own.
const char* reason_phrase(int status);

/// {"error": message}, with bytes that are not UTF-8 replaced.
std::string error_body(const std::string& message);

/// Throws Error("http", ...) for a handler's response that would break the framing (header
/// injection, an impossible status).
void check_response(const HttpResponse& r);

/// Whether the response carries "Connection: close" among its extra headers.
bool asks_to_close(const HttpResponse& r);

/// The response's bytes: status line, headers (Content-Length ours; none for 204 and 304) and,
/// unless `head_only`, the body. `close` adds "Connection: close".
std::string serialize(const HttpResponse& r, bool head_only, bool close);

/// Writes a streamed response on one connection: the head with Transfer-Encoding: chunked, then
/// each piece as a chunk; finish() sends the last (empty) chunk.
class ChunkedWriter final : public HttpStreamWriter {
 public:
  ChunkedWriter(int fd, double timeout_s, bool head_only, bool close)
      : m_fd(fd), m_timeout_s(timeout_s), m_head_only(head_only), m_close(close) {}

  bool begin(int status, const std::string& content_type,
             const std::vector<std::pair<std::string, std::string>>& headers) override;
  bool write(std::string_view data) override;

  [[nodiscard]] bool begun() const noexcept override { return m_begun; }
  [[nodiscard]] bool broken() const noexcept { return m_broken; }
  [[nodiscard]] bool close() const noexcept { return m_close; }
  bool finish() { return m_head_only || send("0\r\n\r\n"); }

 private:
  bool send(std::string_view bytes);

  int m_fd;
  double m_timeout_s;
  bool m_head_only;
  bool m_close;
  bool m_begun = false;
  bool m_broken = false;
};

}  // namespace ptxbench::http
