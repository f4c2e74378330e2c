// Wall-clock time as Unix seconds (a double), the one timestamp form stored in our databases and
// records (queue tasks, run store, load records); its ISO 8601 text for documents (verdicts,
// reports, exports); and elapsed seconds on the steady clock.
#pragma once

#include <chrono>
#include <cmath>
#include <ctime>
#include <string>

namespace ptxbench {

inline double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Unix seconds as ISO 8601 UTC, whole seconds: "2026-11-29T12:00:00Z".
inline std::string iso8601_utc(double unix_seconds) {
  std::time_t t = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// The current UTC time as ISO 8601 ("2026-11-29T12:00:00Z").
inline std::string utc_now_iso8601() { return iso8601_utc(epoch_seconds()); }

/// Seconds since `start` (steady clock): stage and evaluation wall times.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ptxbench
