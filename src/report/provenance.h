// Where a set of verdicts came from: the service's fake backend (test data, no GPU) or a GPU
// evaluation, with the evaluation options it recorded off the evaluator's defaults, and whether
// its trajectories were imported from another release. Every report output marks these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "verdict/verdict.h"

namespace ptxbench::report {

/// One evaluation option whose recorded value is not the evaluator's default
/// (evaluator/eval_options.h), and in how many verdicts.
struct OptionChange {
  std::string option;         ///< as named in the verdict: "correctness_trials", "timing.warmup_calls", "sanitize", ...
  std::string value;          ///< as recorded ("5", "false", "skipped (disabled by option)")
  std::string default_value;  ///< the evaluator's default, same format
  int64_t verdicts = 0;
};

/// Where a set of verdicts came from.
struct Provenance {
  int64_t verdicts = 0;       ///< stored verdicts (extraction errors have none)
  int64_t fake_verdicts = 0;  ///< of which made by the service's fake backend
  std::vector<OptionChange> changed_options;  ///< by option, then value, in the order first seen
  /// Trajectories of runs imported from another release (RunInfo::imported: `ptxbench import`):
  /// their turns carry a status, a speedup and reasoning tokens, but no verdict document.
  int64_t imported_trajectories = 0;

  [[nodiscard]] bool fake() const { return fake_verdicts > 0; }
  [[nodiscard]] bool imported() const { return imported_trajectories > 0; }
  [[nodiscard]] bool options_changed() const { return !changed_options.empty(); }
  Provenance& operator+=(const Provenance& o);
};

/// Whether a verdict comes from the service's fake backend (its document's `fake: true`).
bool from_fake_backend(const Verdict& verdict);
/// The evaluation options a verdict records that differ from the evaluator's defaults, as
/// (option, value, default) with verdicts = 1; also the stages it skipped for want of an option.
std::vector<OptionChange> changed_options(const Verdict& verdict);
/// "timing.trials = 5 (default 3) in 4 of 10 verdicts; ..." ("" when nothing changed).
std::string describe_changes(const Provenance& p);

}  // namespace ptxbench::report
