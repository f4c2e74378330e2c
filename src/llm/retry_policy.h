// When and how long a model client waits before trying a failed call again: exponential back-off
// with full jitter, the provider's own retry-after when it gives one, and which HTTP statuses are
// worth another attempt at all (docs/agent.md, "Retries").
#pragma once

#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>

#include "common/json_check.h"

namespace ptxbench {

/// Named defaults (STYLE habit 8); every field is a key of the model config (docs/agent.md).
struct RetryPolicy {
  int max_retries = 8;              ///< further attempts after the first; 0: never retry
  double backoff_base_s = 1.0;      ///< the n-th retry waits U[0, min(cap, base * 2^n)] (n from 0)
  double backoff_cap_s = 60.0;
  double retry_after_cap_s = 300.0; ///< longest wait taken from a retry-after header
  /// 200 replies whose body is not a valid response (a proxy cut it, a server bug) that are tried
  /// again; the next one fails the call. They also count against max_retries.
  int malformed_retries = 2;

  [[nodiscard]] ordered_json to_json() const;
};

/// 408, 409, 429 and every 5xx except 501/505 (a server that lacks the feature will keep lacking it).
/// A 429 that reports an exhausted spend limit is decided by the caller, which reads the body.
[[nodiscard]] bool is_retryable_status(long status);

/// The wait a response asks for, in seconds: `retry-after-ms` (milliseconds) when present and
/// valid, else `retry-after` as delta-seconds or an HTTP date (relative to `now`; a past date is 0).
/// `headers` keys are lower-case. nullopt when neither header is present or parseable.
[[nodiscard]] std::optional<double> retry_after_seconds(const std::map<std::string, std::string>& headers,
                                                        std::time_t now = std::time(nullptr));

/// Full jitter (AWS architecture blog, "Exponential Backoff and Jitter"): uniform in
/// [0, min(cap, base * 2^retry)], so many trajectories that failed together do not return together.
[[nodiscard]] double backoff_delay(const RetryPolicy& policy, int retry, std::mt19937_64& rng);

/// The wait before retry number `retry` (0 for the first): the provider's `told` delay capped at
/// retry_after_cap_s when there is one, else backoff_delay.
[[nodiscard]] double retry_delay(const RetryPolicy& policy, int retry, std::optional<double> told,
                                 std::mt19937_64& rng);

/// Waits between attempts; injectable so tests run without waiting and can assert the delays.
using Sleeper = std::function<void(double seconds)>;
void sleep_seconds(double seconds);  ///< the real one

}  // namespace ptxbench
