// JSON-RPC 2.0 as MCP's stdio transport carries it (protocol revision 2025-11-25): one message per
// line, UTF-8, no newline inside a message; requests, notifications and responses; no batches
// (removed from MCP in 2025-06-18, so a JSON array is an invalid request). docs/mcp.md.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/json_check.h"

namespace ptxbench::mcp {

/// The standard JSON-RPC error codes.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

/// A protocol error: a request handler throws it and the caller answers with a JSON-RPC error
/// object (not a tool result; tool execution errors are results with isError, mcp_server.h).
class RpcError : public Error {
 public:
  RpcError(int code, const std::string& message, ordered_json data = nullptr)
      : Error("JSON-RPC", message), m_code(code), m_message(message), m_data(std::move(data)) {}
  [[nodiscard]] int code() const noexcept { return m_code; }
  /// The message without the library prefix, as the error object carries it.
  [[nodiscard]] const std::string& message() const noexcept { return m_message; }
  [[nodiscard]] const ordered_json& data() const noexcept { return m_data; }

 private:
  int m_code;
  std::string m_message;
  ordered_json m_data;
};

enum class MessageKind { request, notification, response };

/// One incoming message, checked against JSON-RPC 2.0 and MCP's rules for ids and params.
struct RpcMessage {
  MessageKind kind = MessageKind::request;
  ordered_json id;  ///< a string or an integer (requests, responses); null for notifications
  std::string method;  ///< requests and notifications
  ordered_json params = ordered_json::object();  ///< always an object (absent params: empty)
  ordered_json result;  ///< responses: the result, or null with `error` set
  ordered_json error;   ///< responses: the error object, or null
};

/// A line read into a message, or the error response it earns (parse error, invalid request:
/// `id` null unless the line carried a readable id).
struct ParsedLine {
  std::optional<RpcMessage> message;
  ordered_json error_response;  ///< set iff `message` is empty
};

/// Reads one line (without its '\n'; a trailing '\r' is ignored). Never throws.
ParsedLine parse_line(std::string_view line);

ordered_json make_response(const ordered_json& id, ordered_json result);
ordered_json make_error(const ordered_json& id, int code, const std::string& message, const ordered_json& data = nullptr);
ordered_json make_notification(const std::string& method, ordered_json params);

/// The message as one line of compact JSON with its '\n'. Invalid UTF-8 (a compiler log, a runner's
/// output) is replaced with U+FFFD rather than refused; JSON escapes every control character, so
/// the line holds no other newline.
std::string to_line(const ordered_json& message);

/// Reads newline-delimited lines from a file descriptor, each at most `max_line_bytes`.
class LineReader {
 public:
  explicit LineReader(int fd, std::size_t max_line_bytes = kDefaultMaxLine);
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// 16 MiB: a 1 MiB source escaped as JSON, with room to spare.
  static constexpr std::size_t kDefaultMaxLine = std::size_t{16} << 20;

  struct Line {
    std::string text;
    bool too_long = false;  ///< the line went past the limit: `text` is empty, the rest was skipped
  };
  /// The next line; nullopt at end of input (a last line without '\n' is still returned). Throws
  /// Error when read(2) fails.
  std::optional<Line> next();

 private:
  int m_fd;
  std::size_t m_max;
  std::string m_buffer;
  std::size_t m_scanned = 0;  ///< bytes of m_buffer already searched for '\n'
  bool m_eof = false;
};

/// Writes whole messages to a file descriptor, one at a time from any thread.
class LineWriter {
 public:
  explicit LineWriter(int fd) : m_fd(fd) {}
  /// Throws Error when the peer is gone (EPIPE) or write(2) fails otherwise.
  void write(const ordered_json& message);

 private:
  int m_fd;
  std::mutex m_mutex;
};

}  // namespace ptxbench::mcp
