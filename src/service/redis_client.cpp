#include "service/redis_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <memory>

#include "common/fs.h"

namespace ptxbench {
namespace {

// Redis refuses bulk strings above 512 MiB (proto-max-bulk-len); anything larger is a broken stream.
constexpr int64_t kMaxBulkBytes = int64_t(512) << 20;
// Replies we read nest at most a few levels (XREADGROUP: streams → entries → fields).
constexpr int kMaxDepth = 32;

double steady_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int64_t parse_int(std::string_view s, const std::string& what) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    throw RedisConnectionError(fmt::format("protocol error: {} '{}' is not an integer", what, s));
  return v;
}

/// Milliseconds left before `deadline` for poll(2); 0 when past.
int poll_ms(double deadline) {
  double left = deadline - steady_now();
  return left <= 0 ? 0 : static_cast<int>(left * 1000) + 1;
}

std::string encode_command(const std::vector<std::string>& argv) {
  std::string out = fmt::format("*{}\r\n", argv.size());
  for (const auto& a : argv) {
    out += fmt::format("${}\r\n", a.size());
    out += a;
    out += "\r\n";
  }
  return out;
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

RedisClient::RedisClient(RedisOptions options) : m_options(std::move(options)) { connect(); }

std::string RedisClient::where() const { return fmt::format("{}:{}", m_options.host, m_options.port); }

void RedisClient::close() noexcept {
  m_socket.reset();
  m_in.clear();
  m_in_pos = 0;
}

void RedisClient::connect() {
  close();
  double deadline = steady_now() + m_options.connect_timeout_s;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string port = std::to_string(m_options.port);
  if (int rc = ::getaddrinfo(m_options.host.c_str(), port.c_str(), &hints, &found); rc != 0)
    throw RedisConnectionError(fmt::format("cannot resolve {}: {}", where(), gai_strerror(rc)));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addrs(found, &::freeaddrinfo);
  std::string last_error = "no address";
  for (addrinfo* a = addrs.get(); a; a = a->ai_next) {
    Fd s(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!s.valid()) {
      last_error = std::strerror(errno);
      continue;
    }
    int rc = ::connect(s.get(), a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{s.get(), POLLOUT, 0};
      int n = ::poll(&p, 1, poll_ms(deadline));
      if (n <= 0) {
        last_error = n == 0 ? fmt::format("timed out after {} s", m_options.connect_timeout_s) : std::strerror(errno);
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc != 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int one = 1;
    // Commands are single small writes answered before the next: Nagle would only add latency.
    ::setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    m_socket = std::move(s);
    break;
  }
  if (!m_socket.valid()) throw RedisConnectionError(fmt::format("cannot connect to {}: {}", where(), last_error));
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

void RedisClient::send_all(const std::string& data, double deadline) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(m_socket.get(), data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{m_socket.get(), POLLOUT, 0};
      if (::poll(&p, 1, poll_ms(deadline)) == 0) throw RedisConnectionError("timed out writing to " + where());
      continue;
    }
    throw RedisConnectionError(fmt::format("lost the connection to {} while writing: {}", where(), std::strerror(errno)));
  }
}

void RedisClient::fill(double deadline) {
  if (m_in_pos > 0 && m_in_pos * 2 >= m_in.size()) {
    m_in.erase(0, m_in_pos);
    m_in_pos = 0;
  }
  char buf[16384];
  for (;;) {
    ssize_t n = ::recv(m_socket.get(), buf, sizeof buf, 0);
    if (n > 0) {
      m_in.append(buf, static_cast<std::size_t>(n));
      return;
    }
    if (n == 0) throw RedisConnectionError("the server at " + where() + " closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      throw RedisConnectionError(fmt::format("lost the connection to {}: {}", where(), std::strerror(errno)));
    pollfd p{m_socket.get(), POLLIN, 0};
    int ready = ::poll(&p, 1, poll_ms(deadline));
    if (ready == 0) throw RedisConnectionError("timed out waiting for a reply from " + where());
    if (ready < 0 && errno != EINTR)
      throw RedisConnectionError(fmt::format("poll on the connection to {}: {}", where(), std::strerror(errno)));
  }
}

std::string RedisClient::read_line(double deadline) {
  for (;;) {
    auto end = m_in.find("\r\n", m_in_pos);
    if (end != std::string::npos) {
      std::string line = m_in.substr(m_in_pos, end - m_in_pos);
      m_in_pos = end + 2;
      return line;
    }
    fill(deadline);
  }
}

RedisReply RedisClient::read_reply(double deadline, int depth) {
  if (depth > kMaxDepth) throw RedisConnectionError("protocol error: reply nested too deeply");
  std::string line = read_line(deadline);
  if (line.empty()) throw RedisConnectionError("protocol error: empty reply line");
  char kind = line[0];
  std::string_view rest = std::string_view(line).substr(1);
  RedisReply r;
  auto read_bulk = [&](int64_t len) {
    if (len < 0 || len > kMaxBulkBytes) throw RedisConnectionError(fmt::format("protocol error: bulk length {}", len));
    while (m_in.size() - m_in_pos < static_cast<std::size_t>(len) + 2) fill(deadline);
    std::string s = m_in.substr(m_in_pos, static_cast<std::size_t>(len));
    m_in_pos += static_cast<std::size_t>(len) + 2;
    return s;
  };
  auto read_elements = [&](int64_t n) {
    if (n < 0 || n > (int64_t(1) << 32)) throw RedisConnectionError(fmt::format("protocol error: {} elements", n));
    r.type = RedisReply::Type::array;
    r.elements.reserve(static_cast<std::size_t>(std::min<int64_t>(n, 4096)));
    for (int64_t i = 0; i < n; ++i) r.elements.push_back(read_reply(deadline, depth + 1));
  };
  switch (kind) {
    case '+': r.type = RedisReply::Type::status; r.text = rest; break;
    case '-': r.type = RedisReply::Type::error; r.text = rest; break;
    case ':': r.type = RedisReply::Type::integer; r.integer = parse_int(rest, "integer reply"); break;
    case '$': {
      int64_t len = parse_int(rest, "bulk length");
      if (len == -1) break;  // RESP2 null bulk string
      r.type = RedisReply::Type::bulk;
      r.text = read_bulk(len);
      break;
    }
    case '*': {
      int64_t n = parse_int(rest, "array length");
      if (n == -1) break;  // RESP2 null array (XREADGROUP that timed out)
      read_elements(n);
      break;
    }
    // RESP3, mapped onto the RESP2 shapes.
    case '_': break;
    case '#': r.type = RedisReply::Type::integer; r.integer = rest == "t" ? 1 : 0; break;
    case ',':
    case '(': r.type = RedisReply::Type::status; r.text = rest; break;
    case '=': {  // verbatim string: "txt:" + text
      r.type = RedisReply::Type::bulk;
      r.text = read_bulk(parse_int(rest, "verbatim length"));
      if (r.text.size() >= 4 && r.text[3] == ':') r.text.erase(0, 4);
      break;
    }
    case '!': r.type = RedisReply::Type::error; r.text = read_bulk(parse_int(rest, "error length")); break;
    case '%': read_elements(2 * parse_int(rest, "map length")); break;
    case '~':
    case '>': read_elements(parse_int(rest, "set length")); break;
    case '|': {  // attributes precede the reply they describe: skip them
      RedisReply skipped;
      for (int64_t i = 0, n = 2 * parse_int(rest, "attribute length"); i < n; ++i) skipped = read_reply(deadline, depth + 1);
      return read_reply(deadline, depth);
    }
    default: throw RedisConnectionError(fmt::format("protocol error: unknown reply type '{}'", kind));
  }
  return r;
}

RedisReply RedisClient::command(const std::vector<std::string>& argv, double timeout_s) {
  if (argv.empty()) throw InputError("Redis", "empty command");
  if (m_socket.valid()) {
    // Nothing is outstanding between commands, so a readable socket means the server closed it (a
    // restart, an idle timeout) or sent what we cannot use: reconnect before sending. Not a retry:
    // this command has not been sent.
    pollfd p{m_socket.get(), POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) != 0) close();
  }
  if (!m_socket.valid()) connect();
  double deadline = steady_now() + (timeout_s < 0 ? m_options.io_timeout_s : timeout_s);
  RedisReply reply;
  try {
    send_all(encode_command(argv), deadline);
    reply = read_reply(deadline, 0);
  } catch (const RedisConnectionError&) {
    close();  // the stream position is unknown now: a late reply must not answer the next command
    throw;
  }
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
