// A Redis client on hiredis (Debian's libhiredis-dev): one blocking TCP connection with timeouts,
// AUTH (ACL user and password), and command(argv) returning a typed reply. RESP2 only (hiredis
// 0.14 does not read RESP3; HELLO 3 is refused). Used by the Redis Streams queue
// (redis_stream_queue.h); no pipelining.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"

struct redisContext;  // hiredis

namespace ptxbench {

/// The server answered with an error reply ("ERR ...", "WRONGPASS ...", "BUSYGROUP ..."): the
/// command was received and refused. code() is its first word.
class RedisError : public Error {
 public:
  explicit RedisError(const std::string& server_message);
  [[nodiscard]] const std::string& code() const noexcept { return m_code; }
  [[nodiscard]] const std::string& server_message() const noexcept { return m_message; }

 private:
  std::string m_code, m_message;
};

/// No usable connection: refused, timed out, closed by the server, a reply we cannot parse, or a
/// server not ready yet (LOADING its AOF after a restart, BUSY, MASTERDOWN, TRYAGAIN).
/// A command that fails this way may or may not have run on the server.
class RedisConnectionError : public EnvironmentError {
 public:
  explicit RedisConnectionError(const std::string& message) : EnvironmentError("Redis", message) {}
};

/// One reply. An error reply at the top level is thrown as RedisError; inside an array (a script's
/// or EXEC's results) it stays an element of type `error`.
struct RedisReply {
  enum class Type { nil, integer, status, bulk, array, error };
  Type type = Type::nil;
  int64_t integer = 0;              ///< integer
  std::string text;                 ///< status, bulk, error
  std::vector<RedisReply> elements; ///< array

  [[nodiscard]] bool is_nil() const noexcept { return type == Type::nil; }
  /// The integer; throws RedisConnectionError (a reply of a shape we did not expect) on another type.
  [[nodiscard]] int64_t as_integer() const;
  /// A status or bulk string's text; throws on another type.
  [[nodiscard]] const std::string& as_string() const;
  /// An array's elements; throws on another type (nil included: test is_nil() first).
  [[nodiscard]] const std::vector<RedisReply>& as_array() const;
  [[nodiscard]] std::string describe() const;  ///< for error messages and tests
};

struct RedisOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string user;             ///< ACL user; empty: AUTH with the password alone (user "default")
  std::string password;         ///< empty: no AUTH
  int db = 0;                   ///< SELECT after AUTH when not 0
  double connect_timeout_s = 5;
  double io_timeout_s = 30;     ///< per command; blocking commands pass their own (see command())
};

/// "redis://[user[:password]@]host[:port][/db]" → options (defaults elsewhere). A password in the
/// URL is accepted for tests; services read it from a file (read_redis_password).
RedisOptions parse_redis_url(const std::string& url);
/// A password file's content without its trailing newline; InputError when unreadable or empty.
std::string read_redis_password(const std::string& path);

class RedisClient {
 public:
  /// Connects, authenticates and selects the database; throws RedisConnectionError (cannot reach
  /// the server) or RedisError (e.g. WRONGPASS: the server refused the credentials).
  explicit RedisClient(RedisOptions options);
  ~RedisClient();
  RedisClient(RedisClient&&) noexcept;
  RedisClient& operator=(RedisClient&&) noexcept;
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  /// Sends argv as one command (binary-safe) and reads its reply. `timeout_s` < 0 uses
  /// options.io_timeout_s; a blocking command (XREADGROUP BLOCK) passes its block time plus a
  /// margin. The timeout bounds each wait for the socket (SO_RCVTIMEO/SO_SNDTIMEO), not the
  /// command as a whole. A connection error closes the connection and throws
  /// RedisConnectionError; the next command reconnects first (the failed one is not retried: it
  /// may have run). A connection the server closed while idle (a Redis restart) is noticed before
  /// sending and replaced silently. InputError for an empty command or HELLO with protocol 3.
  RedisReply command(const std::vector<std::string>& argv, double timeout_s = -1);
  [[nodiscard]] bool connected() const noexcept { return m_context != nullptr; }
  [[nodiscard]] const RedisOptions& options() const noexcept { return m_options; }

 private:
  struct FreeContext {
    void operator()(redisContext* c) const noexcept;
  };
  void connect();
  void close() noexcept;
  void set_timeout(double timeout_s);
  [[nodiscard]] std::string where() const;

  RedisOptions m_options;
  std::unique_ptr<redisContext, FreeContext> m_context;
  double m_timeout_s = -1;  ///< the socket timeouts now set on m_context
};

}  // namespace ptxbench
