#include "llm/retry_policy.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace ptxbench {
namespace {

/// A non-negative decimal number and nothing else ("5", "1.5"); nullopt otherwise.
std::optional<double> parse_non_negative(const std::string& text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  bool dot = false;
  for (char c : text) {
    if (c == '.' && !dot) {
      dot = true;
    } else if (c < '0' || c > '9') {
      return std::nullopt;
    }
  }
  if (text == ".") return std::nullopt;
  double v = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string trimmed(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

ordered_json RetryPolicy::to_json() const {
  return {{"max_retries", max_retries},
          {"backoff_base_s", backoff_base_s},
          {"backoff_cap_s", backoff_cap_s},
          {"retry_after_cap_s", retry_after_cap_s},
          {"malformed_retries", malformed_retries}};
}

bool is_retryable_status(long status) {
  if (status == 408 || status == 409 || status == 429) return true;
  return status >= 500 && status <= 599 && status != 501 && status != 505;
}

std::optional<double> retry_after_seconds(const std::map<std::string, std::string>& headers, std::time_t now) {
  if (auto it = headers.find("retry-after-ms"); it != headers.end()) {
    if (auto ms = parse_non_negative(trimmed(it->second))) return *ms / 1000.0;
  }
  auto it = headers.find("retry-after");
  if (it == headers.end()) return std::nullopt;
  std::string value = trimmed(it->second);
  if (auto s = parse_non_negative(value)) return *s;
  // An HTTP date (IMF-fixdate and the two obsolete forms RFC 9110 §5.6.7 asks recipients to accept).
  std::time_t when = curl_getdate(value.c_str(), nullptr);
  if (when == static_cast<std::time_t>(-1)) return std::nullopt;
  return std::max(0.0, std::difftime(when, now));
}

double backoff_delay(const RetryPolicy& policy, int retry, std::mt19937_64& rng) {
  double ceiling = policy.backoff_base_s * std::ldexp(1.0, std::clamp(retry, 0, 62));
  ceiling = std::min(ceiling, policy.backoff_cap_s);
  if (ceiling <= 0) return 0;
  return std::uniform_real_distribution<double>(0.0, ceiling)(rng);
}

double retry_delay(const RetryPolicy& policy, int retry, std::optional<double> told, std::mt19937_64& rng) {
  if (told) return std::min(*told, policy.retry_after_cap_s);
  return backoff_delay(policy, retry, rng);
}

void sleep_seconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace ptxbench
