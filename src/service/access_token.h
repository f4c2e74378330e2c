// Access to the evaluation service: the shared bearer token (from a private file or
// $PTXBENCH_TOKEN), the rule that a service reachable from other hosts must have one, and the
// constant-time check of a request's Authorization header. Candidates run as root on the GPU
// hosts, so whoever can submit can run code there.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"

namespace ptxbench {

/// Environment variable holding the token when no token file is given.
inline constexpr const char* kTokenEnv = "PTXBENCH_TOKEN";
/// Shortest token accepted: a guessable token is no protection (`openssl rand -hex 32` gives 64).
inline constexpr std::size_t kMinTokenLength = 16;

/// The service refused a request for its access token (HTTP 401): a missing or wrong token is the
/// user's to fix, so this is an InputError (exit code 2), never an evaluation verdict.
class AccessDenied : public InputError {
 public:
  using InputError::InputError;
};

/// The token of `token_file` when given, else $PTXBENCH_TOKEN when set and non-empty, else
/// nullopt. Throws InputError naming the file for: a missing or unreadable file, a file that its
/// group or others may read or write (chmod 600 it), an empty token, one shorter than
/// kMinTokenLength, or one with characters other than visible ASCII (it travels in a header).
/// Surrounding whitespace (a trailing newline) is not part of the token.
std::optional<std::string> load_access_token(const std::string& token_file);

/// True for addresses only this host can reach: 127.0.0.0/8, ::1, "localhost".
bool is_loopback_host(std::string_view host);

/// The rule of `serve --listen`: a non-loopback address needs a token. Throws InputError saying
/// how to give one otherwise.
void require_token_for_listen(const std::string& host, const std::optional<std::string>& token);

enum class TokenCheck { ok, missing, wrong };

/// Compares the bearer token of an Authorization header value ("Bearer <token>"; the scheme is
/// case-insensitive) with `expected`. Compares SHA-256 digests in constant time, so neither the
/// position of the first differing byte nor the token's length shows in the response time.
TokenCheck check_bearer(std::string_view authorization, const std::string& expected);

}  // namespace ptxbench
