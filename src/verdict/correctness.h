// The correctness rule (docs/design.md §4): any NaN/Inf fails; an element fails only if
// |x−y| > atol AND |x−y|/(|y|+1e-8) > rtol; a tensor passes when the matched ratio reaches
// `required_ratio` (1.0: every element) and, below 1, every unmatched element is still within the
// outlier bound (outlier_atol / outlier_rtol, the same AND rule). Runs on the host over the
// copied-back output.
#pragma once

#include <cstdint>
#include <vector>

#include "common/json_fields.h"
#include "definitions/definition.h"
#include "definitions/workload.h"

namespace ptxbench {

struct Tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
  double required_ratio = 1.0;
  double outlier_atol = 0.0;  ///< with required_ratio < 1; 0 with 0: no bound (refused by definitions)
  double outlier_rtol = 0.0;

  /// The tolerance for `def`: this one with the definition's own fields over it.
  [[nodiscard]] Tolerance for_definition(const Definition& def) const;
};
void json_fields(JsonIo& io, Tolerance& t);

struct Mismatch {
  std::vector<int64_t> index;  ///< multi-index into the tensor
  double got = 0.0;
  double expected = 0.0;
};

struct TensorComparison {
  std::string name;
  int64_t elements = 0;
  int64_t mismatches = 0;   ///< includes non-finite values
  int64_t non_finite = 0;   ///< NaN or Inf in the candidate's output
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
  std::vector<Mismatch> first_mismatches;  ///< lowest linear indices first (at most 8)
  bool passed = false;
  int64_t beyond_outlier_bound = 0;  ///< mismatches outside the outlier bound (when one is set)
};
void json_fields(JsonIo& io, TensorComparison& c);

/// Compares the candidate's output `got` (raw elements of spec.dtype) with the fp32 reference, on
/// `threads` host threads (0: one per core, at most 16; workers sharing a host pass their share).
TensorComparison compare_tensor(const void* got, const float* expected, const TensorSpec& spec,
                                const Tolerance& tol, unsigned threads = 0);

/// Converts one element of a floating dtype to double (bf16, f16, f32).
double element_to_double(const void* data, DType dtype, int64_t index);

/// The verdict's form of a mismatch: a non-finite value is written as "nan", "inf" or "-inf".
void to_json(ordered_json& j, const Mismatch& m);
void from_json(const ordered_json& j, Mismatch& m);

}  // namespace ptxbench
