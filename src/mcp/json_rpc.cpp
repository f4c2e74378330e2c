#include "mcp/json_rpc.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>

namespace ptxbench::mcp {
namespace {

ParsedLine fail(const ordered_json& id, int code, const std::string& message) {
  ParsedLine p;
  p.error_response = make_error(id, code, message);
  return p;
}

// MCP: "Requests MUST include a string or integer ID" (and never null).
bool valid_id(const ordered_json& id) { return id.is_string() || id.is_number_integer(); }

}  // namespace

ParsedLine parse_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ordered_json j = ordered_json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fail(nullptr, kParseError, "Parse error: the line is not one JSON value (UTF-8)");
  if (j.is_array())
    return fail(nullptr, kInvalidRequest,
                "Invalid Request: batches are not part of MCP 2025-11-25; send one message per line");
  if (!j.is_object()) return fail(nullptr, kInvalidRequest, "Invalid Request: a message is a JSON object");
  const bool has_id = j.contains("id");
  if (has_id && !valid_id(j["id"]))
    return fail(nullptr, kInvalidRequest, "Invalid Request: id must be a string or an integer");
  ordered_json id = has_id ? j["id"] : ordered_json(nullptr);
  const bool has_method = j.contains("method");
  if (!j.contains("jsonrpc") || j["jsonrpc"] != "2.0") {
    if (has_method && !has_id) return {};  // a notification gets no answer, not even an error
    return fail(id, kInvalidRequest, "Invalid Request: \"jsonrpc\" must be \"2.0\"");
  }
  RpcMessage m;
  m.id = id;
  if (has_method) {
    m.kind = has_id ? MessageKind::request : MessageKind::notification;
    if (!j["method"].is_string()) {
      if (!has_id) return {};
      return fail(id, kInvalidRequest, "Invalid Request: method must be a string");
    }
    m.method = j["method"].get<std::string>();
    if (j.contains("params")) {
      if (!j["params"].is_object()) {
        if (!has_id) return {};
        return fail(id, kInvalidParams, "Invalid params: params must be an object");
      }
      m.params = j["params"];
    }
    return {std::move(m), nullptr};
  }
  // A response to a request of ours (we send none today). A malformed one is dropped: answering a
  // response would start a loop of errors.
  const bool has_result = j.contains("result"), has_error = j.contains("error");
  if (!has_result && !has_error) return fail(id, kInvalidRequest, "Invalid Request: a request needs a method");
  if (!has_id || (has_result && has_error)) return {};
  m.kind = MessageKind::response;
  if (has_result) m.result = j["result"];
  else m.error = j["error"];
  m.params = nullptr;
  return {std::move(m), nullptr};
}

ordered_json make_response(const ordered_json& id, ordered_json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

ordered_json make_error(const ordered_json& id, int code, const std::string& message, const ordered_json& data) {
  ordered_json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = data;
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

ordered_json make_notification(const std::string& method, ordered_json params) {
  return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

std::string to_line(const ordered_json& message) {
  return message.dump(-1, ' ', /*ensure_ascii=*/false, ordered_json::error_handler_t::replace) + "\n";
}

// ---------------------------------------------------------------------------------------- LineReader

LineReader::LineReader(int fd, std::size_t max_line_bytes) : m_fd(fd), m_max(max_line_bytes) {}

std::optional<LineReader::Line> LineReader::next() {
  bool skipping = false;  // inside a line that went past the limit: drop bytes up to its '\n'
  for (;;) {
    std::size_t nl = m_buffer.find('\n', m_scanned);
    if (nl != std::string::npos) {
      Line line;
      if (skipping || nl > m_max) line.too_long = true;
      else line.text = m_buffer.substr(0, nl);
      m_buffer.erase(0, nl + 1);
      m_scanned = 0;
      return line;
    }
    m_scanned = m_buffer.size();
    if (m_buffer.size() > m_max) {
      skipping = true;
      m_buffer.clear();
      m_scanned = 0;
    }
    if (m_eof) {
      if (skipping) return Line{"", true};
      if (m_buffer.empty()) return std::nullopt;
      Line line{std::move(m_buffer), false};
      m_buffer.clear();
      m_scanned = 0;
      return line;
    }
    char chunk[1 << 16];
    ssize_t n = ::read(m_fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error("mcp", std::string("reading the client's messages: ") + std::strerror(errno));
    }
    if (n == 0) m_eof = true;
    else m_buffer.append(chunk, static_cast<std::size_t>(n));
  }
}

// ---------------------------------------------------------------------------------------- LineWriter

void LineWriter::write(const ordered_json& message) {
  std::string line = to_line(message);
  std::lock_guard lock(m_mutex);
  std::size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(m_fd, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) throw Error("mcp", "the client closed its end of the connection");
      throw Error("mcp", std::string("writing to the client: ") + std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace ptxbench::mcp
