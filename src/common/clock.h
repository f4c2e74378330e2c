// Wall-clock time as Unix seconds (a double), the one timestamp form stored in our databases and
// records (queue tasks, run store, load records); and elapsed seconds on the steady clock.
#pragma once

#include <chrono>

namespace ptxbench {

inline double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Seconds since `start` (steady clock): stage and evaluation wall times.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace ptxbench
