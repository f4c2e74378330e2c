#include "verdict/status.h"

namespace ptxbench {
namespace {
constexpr std::pair<Status, const char*> kNames[] = {
    {Status::PASSED, "PASSED"},
    {Status::COMPILE_ERROR, "COMPILE_ERROR"},
    {Status::BANNED_API, "BANNED_API"},
    {Status::ABI_ERROR, "ABI_ERROR"},
    {Status::SANITIZER_ERROR, "SANITIZER_ERROR"},
    {Status::TIMEOUT, "TIMEOUT"},
    {Status::INCORRECT_NUMERICAL, "INCORRECT_NUMERICAL"},
    {Status::RUNTIME_ERROR, "RUNTIME_ERROR"},
    {Status::TIMING_ANOMALY, "TIMING_ANOMALY"},
    {Status::INFRA_ERROR, "INFRA_ERROR"},
};
}  // namespace

std::string to_string(Status s) {
  for (const auto& [v, n] : kNames)
    if (v == s) return n;
  return "INFRA_ERROR";
}

std::optional<Status> parse_status(const std::string& s) {
  for (const auto& [v, n] : kNames)
    if (s == n) return v;
  return std::nullopt;
}

}  // namespace ptxbench
