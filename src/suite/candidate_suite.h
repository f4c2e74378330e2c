// A candidate suite: kernels with the verdict the evaluator must give each (the fixtures now, the
// calibration set later). Cases are files, or exact edits of a base file or of an earlier case, so that
// a broken variant (or a kernel in another binding) states its change in a few lines instead of copying
// a whole kernel.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/fs.h"
#include "common/json_check.h"
#include "compile/triton_check.h"
#include "verdict/verdict.h"

namespace ptxbench {

struct SuiteExpectation {
  Status status = Status::PASSED;
  std::optional<bool> static_hgmma;  ///< HGMMA present in the static SASS
  std::optional<bool> c_gen4;        ///< wgmma executed (PASSED verdicts)
  std::optional<bool> d_tma;         ///< bulk tensor copies executed (PASSED verdicts)
  /// Adversarial cases: the strict target-instruction rule (tensor-core coverage), an upper bound
  /// on the speedup (a cheat that must not look fast), a phrase the verdict's message must hold.
  std::optional<bool> strict_target;
  std::optional<bool> target;  ///< the paper's target-instruction rule (a void profile makes it false)
  std::optional<double> speedup_below;
  std::string message_contains;
  /// Other statuses that also match, for an outcome that depends on the card or the driver (a
  /// flood CUPTI drops on one card overflows the runner's reply on another): each must still be
  /// the candidate's charge, which `load_suite` checks (never INFRA_ERROR, never PASSED).
  std::vector<Status> also_accepted;
};

struct SuiteCase {
  std::string name;
  std::string description;
  /// "simt_tiled_gemm.cu", "simt_tiled_gemm.cu + 2 edits" or, for an edit of an earlier case,
  /// "case gemm_wgmma_tvm_ffi + 1 edit".
  std::string origin;
  std::string source;  ///< the materialized, self-contained candidate
  /// "language" in the file, else by the extension of "file"/"base" (.py: Triton), else the
  /// "base_case"'s.
  CandidateLanguage language = CandidateLanguage::cuda;
  SuiteExpectation expect;
};

struct CandidateSuite {
  std::string definition;
  std::string description;
  std::vector<SuiteCase> cases;

  /// The case called `name`; InputError when the suite has none.
  [[nodiscard]] const SuiteCase& case_named(const std::string& name) const;
};

/// Loads a suite file and materializes every case; InputError names the file, the case and the
/// field (an edit that matches zero or several times is an error). A case's "file" or "base" is
/// relative to the suite's folder and must lie under that folder's parent ("../gemm/x.cu" is fine,
/// "../../x.cu" or an absolute path is refused); "base_case" names an earlier case of the suite.
CandidateSuite load_suite(const fs::path& suite_file);

/// What in `verdict` differs from the expectation; empty when it matches.
std::vector<std::string> expectation_mismatches(const SuiteExpectation& expect, const Verdict& verdict);

}  // namespace ptxbench
