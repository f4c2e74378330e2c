#include "verdict/status.h"

#include "common/enum_names.h"

namespace ptxbench {
namespace {
constexpr EnumName<Status> kNames[] = {
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

std::string to_string(Status s) { return enum_name(kNames, s); }

std::optional<Status> parse_status(const std::string& s) { return find_enum(kNames, s); }

Status status_from_name(std::string_view name) { return parse_enum(kNames, name, "verdict status"); }

bool is_compile_stage(Status s) { return s == Status::COMPILE_ERROR || s == Status::BANNED_API || s == Status::ABI_ERROR; }

}  // namespace ptxbench
