// The Redis client over hiredis's blocking API: connection, AUTH/SELECT, one command at a time, and
// hiredis's replies converted to RedisReply.
#include "service/redis_client.h"

#include <hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>

#include "common/fs.h"

namespace ptxbench {
namespace {

int64_t parse_int(std::string_view s, const std::string& what) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    throw RedisConnectionError(fmt::format("protocol error: {} '{}' is not an integer", what, s));
  return v;
}

timeval to_timeval(double s) {
  // Zero would mean "no timeout" to the socket options: never wait forever.
  auto us = static_cast<long long>(std::llround(std::max(s, 0.001) * 1e6));
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

RedisReply convert(const redisReply& r) {
  RedisReply out;
  switch (r.type) {
    case REDIS_REPLY_NIL: break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::integer;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_ERROR:
      out.type = r.type == REDIS_REPLY_STATUS   ? RedisReply::Type::status
                 : r.type == REDIS_REPLY_STRING ? RedisReply::Type::bulk
                                                : RedisReply::Type::error;
      out.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::array;
      out.elements.reserve(r.elements);
      for (std::size_t i = 0; i < r.elements; ++i) out.elements.push_back(convert(*r.element[i]));
      break;
    default: throw RedisConnectionError(fmt::format("hiredis returned a reply of unknown type {}", r.type));
  }
  return out;
}

/// hiredis writes with write(2): a server gone between two commands would raise SIGPIPE, which
/// kills a process that did not ignore it (serve, worker). Blocks it on this thread for the
/// duration of a command and swallows one it caused (the write then fails with EPIPE instead).
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&m_pipe);
    sigaddset(&m_pipe, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    m_was_pending = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &m_pipe, &m_old);
  }
  ~SigpipeGuard() {
    if (!m_was_pending) {
      sigset_t pending;
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        timespec zero{0, 0};
        while (sigtimedwait(&m_pipe, nullptr, &zero) < 0 && errno == EINTR) {
        }
      }
    }
    pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t m_pipe{}, m_old{};
  bool m_was_pending = false;
};

bool is_resp3_hello(const std::vector<std::string>& argv) {
  if (argv.size() < 2 || argv[0].size() != 5) return false;
  std::string name = argv[0];
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name == "HELLO" && argv[1] != "2";
}

}  // namespace

RedisError::RedisError(const std::string& server_message)
    : Error("Redis", server_message), m_code(server_message.substr(0, server_message.find(' '))), m_message(server_message) {}

int64_t RedisReply::as_integer() const {
  if (type != Type::integer) throw RedisConnectionError("expected an integer reply, got " + describe());
  return integer;
}

const std::string& RedisReply::as_string() const {
  if (type != Type::status && type != Type::bulk) throw RedisConnectionError("expected a string reply, got " + describe());
  return text;
}

const std::vector<RedisReply>& RedisReply::as_array() const {
  if (type != Type::array) throw RedisConnectionError("expected an array reply, got " + describe());
  return elements;
}

std::string RedisReply::describe() const {
  switch (type) {
    case Type::nil: return "nil";
    case Type::integer: return fmt::format("(integer) {}", integer);
    case Type::status: return "(status) " + text;
    case Type::bulk: return fmt::format("\"{}\"", text.size() > 80 ? text.substr(0, 80) + "..." : text);
    case Type::error: return "(error) " + text;
    case Type::array: {
      std::string s = "[";
      for (std::size_t i = 0; i < elements.size(); ++i) s += (i ? ", " : "") + elements[i].describe();
      return s + "]";
    }
  }
  return "?";
}

RedisOptions parse_redis_url(const std::string& url) {
  constexpr std::string_view scheme = "redis://";
  if (url.rfind(scheme, 0) != 0) throw InputError("Redis", "queue URL '" + url + "' does not start with redis://");
  RedisOptions o;
  std::string rest = url.substr(scheme.size());
  rest = rest.substr(0, rest.find('?'));  // parameters (prefix=...) are the queue's: redis_task_queue.h
  if (auto at = rest.rfind('@'); at != std::string::npos) {
    std::string cred = rest.substr(0, at);
    rest = rest.substr(at + 1);
    auto colon = cred.find(':');
    o.user = cred.substr(0, colon);
    if (colon != std::string::npos) o.password = cred.substr(colon + 1);
  }
  std::string hostport = rest.substr(0, rest.find('/'));
  if (auto slash = rest.find('/'); slash != std::string::npos && slash + 1 < rest.size()) {
    try {
      o.db = static_cast<int>(parse_int(rest.substr(slash + 1), "database"));
    } catch (const RedisConnectionError&) {
      throw InputError("Redis", "queue URL '" + url + "': the database after '/' must be a number");
    }
  }
  std::string port_text;
  if (!hostport.empty() && hostport.front() == '[') {  // [IPv6]:port
    auto close = hostport.find(']');
    if (close == std::string::npos) throw InputError("Redis", "queue URL '" + url + "': no ']' after the IPv6 address");
    if (close + 1 < hostport.size() && hostport[close + 1] == ':') port_text = hostport.substr(close + 2);
    hostport = hostport.substr(1, close - 1);
  } else if (auto colon = hostport.rfind(':'); colon != std::string::npos) {
    port_text = hostport.substr(colon + 1);
    hostport = hostport.substr(0, colon);
  }
  if (!port_text.empty()) {
    try {
      o.port = static_cast<int>(parse_int(port_text, "port"));
    } catch (const RedisConnectionError&) {
      throw InputError("Redis", "queue URL '" + url + "': the port must be a number");
    }
  }
  if (!hostport.empty()) o.host = hostport;
  return o;
}

std::string read_redis_password(const std::string& path) {
  std::string p = read_file(path);
  while (!p.empty() && (p.back() == '\n' || p.back() == '\r')) p.pop_back();
  if (p.empty()) throw InputError("Redis", "password file " + path + " is empty");
  return p;
}

void RedisClient::FreeContext::operator()(redisContext* c) const noexcept { redisFree(c); }

RedisClient::RedisClient(RedisOptions options) : m_options(std::move(options)) { connect(); }
RedisClient::~RedisClient() = default;
RedisClient::RedisClient(RedisClient&&) noexcept = default;
RedisClient& RedisClient::operator=(RedisClient&&) noexcept = default;

std::string RedisClient::where() const { return fmt::format("{}:{}", m_options.host, m_options.port); }

void RedisClient::close() noexcept {
  m_context.reset();
  m_timeout_s = -1;
}

void RedisClient::connect() {
  close();
  // hiredis resolves the name (IPv4 or IPv6), connects within the timeout and sets TCP_NODELAY.
  std::unique_ptr<redisContext, FreeContext> c(
      redisConnectWithTimeout(m_options.host.c_str(), m_options.port, to_timeval(m_options.connect_timeout_s)));
  if (!c) throw RedisConnectionError(fmt::format("cannot connect to {}: out of memory", where()));
  if (c->err) {
    std::string why = c->errstr;
    if (why.find("Operation now in progress") != std::string::npos || why.find("timed out") != std::string::npos)
      why = fmt::format("timed out after {} s", m_options.connect_timeout_s);
    throw RedisConnectionError(fmt::format("cannot connect to {}: {}", where(), why));
  }
  m_context = std::move(c);
  try {
    if (!m_options.password.empty()) {
      if (m_options.user.empty())
        command({"AUTH", m_options.password});
      else
        command({"AUTH", m_options.user, m_options.password});
    }
    if (m_options.db != 0) command({"SELECT", std::to_string(m_options.db)});
  } catch (...) {
    close();  // refused credentials leave no half-authenticated connection behind
    throw;
  }
}

void RedisClient::set_timeout(double timeout_s) {
  if (timeout_s == m_timeout_s) return;
  if (redisSetTimeout(m_context.get(), to_timeval(timeout_s)) != REDIS_OK) {
    std::string why = m_context->errstr;
    close();
    throw RedisConnectionError(fmt::format("cannot set the timeout on the connection to {}: {}", where(), why));
  }
  m_timeout_s = timeout_s;
}

RedisReply RedisClient::command(const std::vector<std::string>& argv, double timeout_s) {
  if (argv.empty()) throw InputError("Redis", "empty command");
  if (is_resp3_hello(argv))
    throw InputError("Redis", "RESP3 is not supported (HELLO " + argv[1] + "): hiredis 0.14 reads RESP2 only");
  if (m_context) {
    // Nothing is outstanding between commands, so a readable socket means the server closed it (a
    // restart, an idle timeout) or sent what we cannot use: reconnect before sending. Not a retry:
    // this command has not been sent.
    pollfd p{m_context->fd, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) != 0) close();
  }
  if (!m_context) connect();
  set_timeout(timeout_s < 0 ? m_options.io_timeout_s : timeout_s);

  std::vector<const char*> args;
  std::vector<std::size_t> lengths;
  args.reserve(argv.size());
  lengths.reserve(argv.size());
  for (const auto& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  redisReply* raw;
  int saved_errno;
  {
    SigpipeGuard guard;
    raw = static_cast<redisReply*>(
        redisCommandArgv(m_context.get(), static_cast<int>(args.size()), args.data(), lengths.data()));
    saved_errno = errno;
  }
  if (!raw) {
    // The stream position is unknown now: a late reply must not answer the next command.
    std::string why = m_context->errstr;
    int kind = m_context->err;
    close();
    if (kind == REDIS_ERR_IO && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK))
      throw RedisConnectionError("timed out waiting for a reply from " + where());
    if (kind == REDIS_ERR_EOF) throw RedisConnectionError("the server at " + where() + " closed the connection");
    if (kind == REDIS_ERR_PROTOCOL) throw RedisConnectionError("protocol error from " + where() + ": " + why);
    throw RedisConnectionError(fmt::format("lost the connection to {}: {}", where(), why));
  }
  std::unique_ptr<redisReply, decltype(&freeReplyObject)> owned(raw, &freeReplyObject);
  RedisReply reply = convert(*owned);
  if (reply.type == RedisReply::Type::error) {
    // A server that is up but cannot serve yet (replaying its AOF after a restart, a busy script,
    // a replica without its master) is as unusable as a down one: callers retry both alike.
    const std::string code = reply.text.substr(0, reply.text.find(' '));
    if (code == "LOADING" || code == "BUSY" || code == "MASTERDOWN" || code == "TRYAGAIN")
      throw RedisConnectionError("not ready at " + where() + ": " + reply.text);
    throw RedisError(reply.text);
  }
  return reply;
}

}  // namespace ptxbench
