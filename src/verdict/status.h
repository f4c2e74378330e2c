// Verdict statuses. INFRA_ERROR is ours (retried, never counted against a model).
#pragma once

#include <optional>
#include <string>
#include <string_view>

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
/// The status named `s`, or nullopt (a status this version does not know).
std::optional<Status> parse_status(const std::string& s);
/// The status named `name`; InputError naming every status otherwise.
Status status_from_name(std::string_view name);
/// Whether the compile stage gives this status (COMPILE_ERROR, BANNED_API, ABI_ERROR): a verdict
/// reached without a GPU.
bool is_compile_stage(Status s);

}  // namespace ptxbench
