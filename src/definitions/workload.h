// A workload fixes a definition's variable axes and its input sampler (FlashInfer-Trace workload
// lines); resolving it gives the concrete tensors, in ABI order, that an evaluation allocates.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "definitions/definition.h"

namespace ptxbench {

struct InputSampler {
  /// "random": standard normal, fresh per trial; "scalar": `value`; "derived" (ptxbench extension):
  /// computed by the trusted implementation from the other inputs (O and LSE of a backward).
  std::string kind = "random";
  double value = 0.0;
};

struct Workload {
  std::string definition;
  std::string uuid;
  std::map<std::string, int64_t> axes;  ///< var axes only
  std::map<std::string, InputSampler> inputs;
  std::vector<std::string> tags;
  std::string source;  ///< "workloads/x.jsonl:3"
  [[nodiscard]] bool is_default() const;
  /// "M=8192" (var axes in definition order).
  [[nodiscard]] std::string label(const Definition& def) const;
};

/// One JSONL line: either {"definition", "workload": {...}, "solution"?, "evaluation"?} or the
/// bare workload object with a "definition" field. Validated against `def`.
Workload parse_workload(const std::string& line, const std::string& document, const Definition& def);
/// The definition a workload line names (to route it before full validation).
std::string workload_definition_name(const std::string& line, const std::string& document);

struct TensorSpec {
  std::string name;
  DType dtype = DType::bf16;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  ///< elements, row-major contiguous
  bool is_output = false;
  [[nodiscard]] int64_t numel() const;
  [[nodiscard]] std::size_t bytes() const;
  [[nodiscard]] std::string shape_text() const;  ///< "[8192, 5120]"
};

struct ResolvedWorkload {
  const Definition* definition = nullptr;
  Workload workload;
  std::map<std::string, int64_t> axis_values;  ///< every axis, const and var
  std::vector<TensorSpec> tensors;             ///< inputs then outputs, definition order
  [[nodiscard]] int64_t axis(const std::string& name) const;
  [[nodiscard]] const TensorSpec& tensor(const std::string& name) const;
};

ResolvedWorkload resolve_workload(const Definition& def, const Workload& w);

}  // namespace ptxbench
