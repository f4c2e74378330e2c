// Strict parsing of an HTTP/1.1 request head (RFC 9112): the request line, the target with its
// query, the header fields and what they say about the body and the connection. Internal to
// src/service/http_*; every refusal is a ProtocolError that the server turns into a reply.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "service/http_server.h"

namespace ptxbench::http {

/// A request we refuse: becomes an error reply with this status, then the connection closes.
struct ProtocolError {
  int status;
  std::string message;
};

/// Most header fields a request may carry (431 beyond).
inline constexpr std::size_t kMaxHeaderFields = 100;

struct RequestHead {
  HttpRequest request;             ///< method, path, query and headers; no body or remote yet
  std::size_t content_length = 0;  ///< SIZE_MAX when it has more digits than fit
  bool expect_continue = false;
  bool close = false;  ///< HTTP/1.0, or "Connection: close"
};

/// Offset just past the empty line that ends a request head, or npos. Lines end in CRLF or, as
/// RFC 9112 §2.2 allows a recipient to accept, a bare LF.
std::size_t find_head_end(const std::string& b);

/// Parses a request head (request line, header fields, the empty line: up to find_head_end).
/// Throws ProtocolError: 400 for malformed syntax, 411/501 for a transfer coding, 417 for an
/// unknown expectation, 431 for too many fields, 505 for another HTTP major version.
RequestHead parse_head(std::string_view head);

}  // namespace ptxbench::http
