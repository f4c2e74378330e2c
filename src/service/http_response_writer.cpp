// HTTP/1.1 response writing (http_response_writer.h) and HttpResponse's constructors.
#include "service/http_response_writer.h"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "service/http_socket.h"
#include "service/http_syntax.h"

namespace ptxbench {

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

namespace http {
namespace {

constexpr const char* kLib = "http";

/// The status line and Content-Type, then each extra header not named in `owned` (lower case).
std::string head_lines(int status, const std::string& content_type, std::initializer_list<const char*> framing,
                       const std::vector<std::pair<std::string, std::string>>& headers,
                       std::initializer_list<const char*> owned) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\n";
  out += "Content-Type: " + content_type + "\r\n";
  for (const char* line : framing) out += line;
  for (const auto& [name, value] : headers) {
    std::string key = ascii_lower(name);
    if (std::find(owned.begin(), owned.end(), key) != owned.end()) continue;  // the server owns framing
    out += name + ": " + value + "\r\n";
  }
  return out;
}

}  // namespace

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

void check_response(const HttpResponse& r) {
  if (r.status < 200 || r.status > 599)
    throw Error(kLib, "handler returned invalid status " + std::to_string(r.status));
  if (!header_value_ok(r.content_type)) throw Error(kLib, "handler returned an invalid Content-Type");
  for (const auto& [name, value] : r.headers)
    if (!is_token(name) || !header_value_ok(value))
      throw Error(kLib, "handler returned an invalid header '" + name + "'");
}

bool asks_to_close(const HttpResponse& r) {
  for (const auto& [name, value] : r.headers)
    if (ascii_lower(name) == "connection" && list_has(value, "close")) return true;
  return false;
}

std::string serialize(const HttpResponse& r, bool head_only, bool close) {
  // RFC 9110 §15.3.5, §15.4.5: 204 and 304 never have content; 204 must not carry Content-Length.
  bool no_content = r.status == 204 || r.status == 304;
  std::string length = no_content ? "" : "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  std::string out = head_lines(r.status, r.content_type, {length.c_str(), close ? "Connection: close\r\n" : ""},
                               r.headers, {"content-length", "transfer-encoding", "connection", "content-type"});
  out += "\r\n";
  if (!head_only && !no_content) out += r.body;
  return out;
}

bool ChunkedWriter::begin(int status, const std::string& content_type,
                          const std::vector<std::pair<std::string, std::string>>& headers) {
  if (m_begun) throw Error(kLib, "a streamed response was begun twice");
  HttpResponse r;
  r.status = status;
  r.content_type = content_type;
  r.headers = headers;
  check_response(r);
  m_begun = true;
  m_close = m_close || asks_to_close(r);
  std::string head = head_lines(status, content_type,
                                {"Transfer-Encoding: chunked\r\n", "Cache-Control: no-cache\r\n",
                                 m_close ? "Connection: close\r\n" : ""},
                                headers, {"content-length", "transfer-encoding", "connection", "content-type", "cache-control"});
  head += "\r\n";
  return send(head);
}

bool ChunkedWriter::write(std::string_view data) {
  if (!m_begun) throw Error(kLib, "write before begin on a streamed response");
  if (data.empty() || m_head_only) return !m_broken;
  char size[32];
  int n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string chunk(size, static_cast<std::size_t>(n));
  chunk.append(data);
  chunk += "\r\n";
  return send(chunk);
}

bool ChunkedWriter::send(std::string_view bytes) {
  if (m_broken) return false;
  if (!send_all(m_fd, bytes, m_timeout_s)) m_broken = true;
  return !m_broken;
}

}  // namespace http
}  // namespace ptxbench
