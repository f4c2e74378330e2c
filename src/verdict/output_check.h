// What checking one call's outputs found: each output tensor compared with the reference, and the
// problems beside the numbers (a guard band written, an input modified), each of a typed kind so
// that the verdict's status follows the kind, never the wording of a message.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "verdict/correctness.h"

namespace ptxbench {

enum class OutputProblemKind {
  guard_written,   ///< the candidate wrote into a guard band around an output (out of bounds)
  input_modified,  ///< an input's fingerprint changed (inputs are read-only)
};

std::string to_string(OutputProblemKind k);
/// "guard_written" or "input_modified"; InputError naming both otherwise.
OutputProblemKind parse_output_problem_kind(std::string_view text);

struct OutputProblem {
  OutputProblemKind kind = OutputProblemKind::guard_written;
  std::string message;  ///< for the model: which tensor, where
};

struct OutputCheck {
  std::vector<TensorComparison> tensors;
  std::vector<OutputProblem> problems;
  [[nodiscard]] bool passed() const;
  [[nodiscard]] bool has(OutputProblemKind kind) const;
};

}  // namespace ptxbench
