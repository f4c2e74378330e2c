#include "verdict/output_check.h"

#include "common/enum_names.h"

namespace ptxbench {
namespace {
constexpr EnumName<OutputProblemKind> kKinds[] = {
    {OutputProblemKind::guard_written, "guard_written"},
    {OutputProblemKind::input_modified, "input_modified"},
};
}  // namespace

std::string to_string(OutputProblemKind k) { return enum_name(kKinds, k); }
OutputProblemKind parse_output_problem_kind(std::string_view text) {
  return parse_enum(kKinds, text, "output problem kind");
}

bool OutputCheck::passed() const {
  if (!problems.empty()) return false;
  for (const auto& t : tensors)
    if (!t.passed) return false;
  return true;
}

bool OutputCheck::has(OutputProblemKind kind) const {
  for (const auto& p : problems)
    if (p.kind == kind) return true;
  return false;
}

}  // namespace ptxbench
