// Verdict statuses. INFRA_ERROR is ours (retried, never counted against a model).
#pragma once

#include <optional>
#include <string>

namespace ptxbench {

enum class Status {
  PASSED,
  COMPILE_ERROR,
  BANNED_API,
  ABI_ERROR,
  SANITIZER_ERROR,
  TIMEOUT,
  INCORRECT_NUMERICAL,
  RUNTIME_ERROR,
  TIMING_ANOMALY,  ///< correct, but timed under the roofline floor: a bug or a cheat, never a record
  INFRA_ERROR,
};

std::string to_string(Status s);
std::optional<Status> parse_status(const std::string& s);

}  // namespace ptxbench
