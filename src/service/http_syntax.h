// The small pieces of HTTP/1.1 syntax (RFC 9110 §5.6) the server's parser and writer share: tokens,
// optional whitespace, comma-separated lists and percent-encoding. Internal to src/service/http_*.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::http {

/// A tchar: a letter, a digit or one of !#$%&'*+-.^_`|~.
bool is_tchar(char c);
/// A non-empty run of tchars (a method, a header name, a transfer coding).
bool is_token(std::string_view s);

/// ASCII lower case; other bytes are kept.
std::string ascii_lower(std::string_view s);

/// `s` without leading and trailing spaces and tabs.
std::string_view trim_ows(std::string_view s);

/// Comma-separated list elements, trimmed and lower-cased, empty ones dropped.
std::vector<std::string> list_tokens(std::string_view value);

/// Whether the comma-separated list `value` holds `token` (lower case), as "Connection: close".
bool list_has(std::string_view value, std::string_view token);

/// Decodes %XX escapes (and '+' as a space when `plus_is_space`, as in a query) into `out`. False
/// on a malformed escape ("%zz", a trailing "%4").
bool percent_decode(std::string_view in, bool plus_is_space, std::string& out);

/// A header value that cannot break the framing: no CR, LF or NUL.
bool header_value_ok(std::string_view v);

}  // namespace ptxbench::http
