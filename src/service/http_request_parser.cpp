// The HTTP request-head parser (http_request_parser.h).
#include "service/http_request_parser.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

#include "service/http_syntax.h"

namespace ptxbench::http {
namespace {

/// The lines of a head, CR stripped, without the empty line that ends it.
std::vector<std::string_view> head_lines(std::string_view head) {
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
  return lines;
}

/// The query of a target, "a=1&b=x", into `query` ('+' is a space; a repeated key keeps the last).
void parse_query(std::string_view query, std::map<std::string, std::string>& out) {
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    if (!item.empty()) {
      auto eq = item.find('=');
      std::string key, value;
      if (!percent_decode(item.substr(0, eq), true, key) ||
          (eq != std::string_view::npos && !percent_decode(item.substr(eq + 1), true, value)))
        throw ProtocolError{400, "malformed percent-encoding in the query"};
      out[key] = value;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
}

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
    std::string prefix = ascii_lower(target.substr(0, std::min<std::size_t>(target.size(), 8)));
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
  if (qmark != std::string_view::npos) parse_query(target.substr(qmark + 1), request.query);
}

/// "METHOD TARGET HTTP/1.x" into `request`; true for HTTP/1.0.
bool parse_request_line(std::string_view line, HttpRequest& request) {
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
  request.method = std::string(method);
  parse_target(target, request.method, request);
  return version[7] == '0';
}

/// One "name: value" line into `headers` (names lower-cased; a repeated field joined with ", ").
void parse_header_field(std::string_view line, std::map<std::string, std::string>& headers) {
  if (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
    throw ProtocolError{400, "obsolete header line folding is not supported"};
  auto colon = line.find(':');
  // A name must be a token right up to the colon: whitespace before it is a smuggling vector
  // (RFC 9112 §5.1) and is rejected.
  if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
    throw ProtocolError{400, "malformed header line"};
  std::string name = ascii_lower(line.substr(0, colon));
  std::string_view value = trim_ows(line.substr(colon + 1));
  for (char c : value) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) throw ProtocolError{400, "invalid character in header '" + name + "'"};
  }
  auto [it, inserted] = headers.emplace(name, std::string(value));
  if (!inserted) {
    if (name == "host") throw ProtocolError{400, "more than one Host header"};
    it->second += ", ";
    it->second += value;
  }
}

/// The body's length from Transfer-Encoding and Content-Length (only the latter is read).
std::size_t body_length(const std::map<std::string, std::string>& headers) {
  if (auto te = headers.find("transfer-encoding"); te != headers.end()) {
    // 411 for chunked: we know the coding but only read Content-Length bodies, and 411 tells the
    // client exactly what to send instead (libcurl does when it knows the size). Any other coding is
    // one we do not implement: 501, as RFC 9112 §6.1 asks.
    if (list_has(te->second, "chunked"))
      throw ProtocolError{411, "chunked request bodies are not supported: send Content-Length"};
    throw ProtocolError{501, "transfer coding '" + te->second + "' is not supported"};
  }
  auto cl = headers.find("content-length");
  if (cl == headers.end()) return 0;
  // Repeated fields (or a list) are legal only when every value is the same (RFC 9110 §8.6).
  auto values = list_tokens(cl->second);
  if (values.empty()) throw ProtocolError{400, "empty Content-Length"};
  for (const auto& v : values) {
    if (v != values[0] || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw ProtocolError{400, "malformed Content-Length '" + cl->second + "'"};
  }
  // More digits than fit: too large for any limit, reported as such.
  return values[0].size() > 18 ? std::numeric_limits<std::size_t>::max()
                               : static_cast<std::size_t>(std::stoull(values[0]));
}

}  // namespace

std::size_t find_head_end(const std::string& b) {
  for (auto i = b.find('\n'); i != std::string::npos; i = b.find('\n', i + 1)) {
    auto j = i + 1;
    if (j < b.size() && b[j] == '\r') ++j;
    if (j < b.size() && b[j] == '\n') return j + 1;
  }
  return std::string::npos;
}

RequestHead parse_head(std::string_view head) {
  std::vector<std::string_view> lines = head_lines(head);
  RequestHead out;
  HttpRequest& request = out.request;
  const bool http10 = parse_request_line(lines[0], request);

  if (lines.size() - 1 > kMaxHeaderFields)
    throw ProtocolError{431, "too many header fields (limit " + std::to_string(kMaxHeaderFields) + ")"};
  for (std::size_t i = 1; i < lines.size(); ++i) parse_header_field(lines[i], request.headers);
  if (!http10 && !request.headers.count("host")) throw ProtocolError{400, "missing Host header (required by HTTP/1.1)"};

  out.content_length = body_length(request.headers);
  if (auto ex = request.headers.find("expect"); ex != request.headers.end()) {
    if (ascii_lower(ex->second) != "100-continue")
      throw ProtocolError{417, "unsupported expectation '" + ex->second + "'"};
    out.expect_continue = !http10;  // RFC 9110 §10.1.1: ignore it from an HTTP/1.0 client
  }
  out.close = http10;
  if (auto conn = request.headers.find("connection"); conn != request.headers.end() && list_has(conn->second, "close"))
    out.close = true;
  return out;
}

}  // namespace ptxbench::http
