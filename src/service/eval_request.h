// A submitted evaluation as the service accepts it: validated strictly (unknown fields, unknown
// definition or workload, oversize source, bad options are 4xx with the field named).
#pragma once

#include <optional>
#include <string>

#include "common/json_check.h"
#include "definitions/catalog.h"
#include "common/error.h"
#include "evaluator/eval_options.h"
#include "compile/triton_check.h"

namespace ptxbench {

struct EvalRequestLimits {
  std::size_t max_source_bytes = 1 << 20;
  int max_trials = 10;
};

/// The source is over the size limit (HTTP 413 rather than 400).
class PayloadTooLarge : public InputError {
 public:
  using InputError::InputError;
};

struct EvalRequest {
  std::string definition;
  std::string workload;  ///< uuid or label; empty: the default workload
  /// The file to compile: "source", or made from a FlashInfer-Bench Solution given as "solution"
  /// (compile/solution.h; its definition is the request's, and the stored form keeps the file).
  std::string source;
  /// "language" beside "source": cuda (default) or triton (a Python file, docs/triton.md).
  CandidateLanguage language = CandidateLanguage::cuda;
  std::optional<uint64_t> seed;
  std::optional<int> trials;
  bool sanitize = true, profile = true, measure_time = true;

  [[nodiscard]] ordered_json to_json() const;
  /// Sets the options an "options" object gives (seed, trials, sanitize, profile, time), read as
  /// the service reads them: InputError naming the field, `document` naming where it came from.
  void set_options(const ordered_json& options, const std::string& document = "options", const EvalRequestLimits& limits = {});
  /// Applies the request's options on top of the service's defaults.
  [[nodiscard]] EvalOptions apply(EvalOptions base) const;
};

/// Throws InputError naming the field. `document` names the source in messages ("request body").
EvalRequest parse_eval_request(const std::string& body, const Catalog& catalog, const EvalRequestLimits& limits,
                               const std::string& document = "request body");
/// The stored form (already validated once; re-checked against the catalog).
EvalRequest eval_request_from_json(const ordered_json& j, const Catalog& catalog, const EvalRequestLimits& limits);

}  // namespace ptxbench
