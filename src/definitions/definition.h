// A definition: one operator at fixed constants with some variable axes, in the FlashInfer-Trace
// schema (name, op_type, axes, inputs, outputs, description, reference; also tags, constraints).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "definitions/dtype.h"

namespace ptxbench {

struct Axis {
  std::string name;
  bool is_const = false;
  std::optional<int64_t> value;  ///< set iff is_const
  std::string description;
};

struct TensorDecl {
  std::string name;
  std::vector<std::string> shape;  ///< axis names; empty for a scalar (shape null)
  bool is_scalar = false;
  DType dtype = DType::bf16;
  std::string description;
};

/// A definition's own correctness tolerance where its outputs need one other than the evaluator's
/// default (docs/verdict.md, "Correctness"); unset fields keep the default.
struct ToleranceOverride {
  std::optional<double> atol, rtol, required_matched_ratio;
  /// With required_matched_ratio < 1: the bound that every unmatched element must still meet.
  std::optional<double> outlier_atol, outlier_rtol;
};

struct Definition {
  std::string name;
  std::string op_type;
  std::string description;
  std::vector<std::string> tags;
  std::vector<Axis> axes;          ///< in file order
  std::vector<TensorDecl> inputs;  ///< in definition order: the candidate ABI relies on it
  std::vector<TensorDecl> outputs;
  std::vector<std::string> constraints;
  std::string reference;  ///< documents the math; our trusted implementation is in C++/CUDA
  std::optional<ToleranceOverride> tolerance;
  std::string source;     ///< file it came from
  std::string json_text;  ///< the definition as it appears in prompts (pretty-printed)

  [[nodiscard]] const Axis* find_axis(const std::string& axis) const;
};

/// Parses and validates one definition document; `document` names it in errors.
Definition parse_definition(const std::string& text, const std::string& document);

}  // namespace ptxbench
