// Loading and checking the service's access token (see access_token.h).
#include "service/access_token.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/fd.h"
#include "common/sha256.h"

namespace ptxbench {
namespace {

constexpr const char* kLib = "access token";
constexpr std::size_t kMaxTokenFileBytes = 4096;

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::string checked_token(std::string_view raw, const std::string& source) {
  std::string_view token = trim(raw);
  if (token.empty()) throw InputError(kLib, source + " holds no token");
  for (char c : token)
    if (c < 0x21 || c > 0x7e)
      throw InputError(kLib, source + ": the token must be visible ASCII characters (no spaces or control characters)");
  if (token.size() < kMinTokenLength)
    throw InputError(kLib, source + ": the token has " + std::to_string(token.size()) + " characters, fewer than " +
                               std::to_string(kMinTokenLength) + " (make one with `openssl rand -hex 32`)");
  return std::string(token);
}

std::string read_token_file(const std::string& path) {
  // fstat of the opened file, not stat of the name: what is checked is what is read.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) throw InputError(kLib, "cannot open token file " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw InputError(kLib, "cannot stat token file " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw InputError(kLib, "token file " + path + " is not a regular file");
  if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw InputError(kLib, "token file " + path + " is accessible by its group or others (mode " + mode +
                               "); make it private with `chmod 600 " + path + "`");
  }
  if (st.st_size > static_cast<off_t>(kMaxTokenFileBytes))
    throw InputError(kLib, "token file " + path + " is larger than " + std::to_string(kMaxTokenFileBytes) + " bytes");
  std::string text;
  char buf[kMaxTokenFileBytes];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(kLib, "cannot read token file " + path + ": " + std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxTokenFileBytes) throw InputError(kLib, "token file " + path + " is too large");
  }
  return checked_token(text, "token file " + path);
}

}  // namespace

std::optional<std::string> load_access_token(const std::string& token_file) {
  if (!token_file.empty()) return read_token_file(token_file);
  const char* env = std::getenv(kTokenEnv);
  if (env == nullptr || *env == '\0') return std::nullopt;
  return checked_token(env, std::string("$") + kTokenEnv);
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  in_addr ip{};
  std::string h(host);
  if (::inet_pton(AF_INET, h.c_str(), &ip) != 1) return false;
  return (ntohl(ip.s_addr) >> 24) == 127;
}

void require_token_for_listen(const std::string& host, const std::optional<std::string>& token) {
  if (token || is_loopback_host(host)) return;
  throw InputError("serve", "listening on " + host +
                                " lets other hosts submit code that runs as root on this host's GPUs: give an access "
                                "token with --token-file FILE (mode 600) or $" + kTokenEnv +
                                ", or listen on 127.0.0.1");
}

TokenCheck check_bearer(std::string_view authorization, const std::string& expected) {
  authorization = trim(authorization);
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return TokenCheck::missing;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    char c = authorization[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return TokenCheck::missing;
  }
  std::string given = sha256_hex(trim(authorization.substr(kScheme.size())));
  std::string want = sha256_hex(expected);
  unsigned char diff = 0;
  for (std::size_t i = 0; i < want.size(); ++i) diff |= static_cast<unsigned char>(given[i] ^ want[i]);
  return diff == 0 ? TokenCheck::ok : TokenCheck::wrong;
}

}  // namespace ptxbench
