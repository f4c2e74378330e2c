// Wall-clock time as Unix seconds (a double), the one timestamp form stored in our databases and
// records (queue tasks, run store, load records).
#pragma once

#include <chrono>

namespace ptxbench {

inline double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace ptxbench
