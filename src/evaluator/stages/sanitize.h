// The sanitize stage: compute-sanitizer memcheck runs the candidate's call, options.sanitize_runs
// times with their own seeds, side by side (the GPU is shared with other untimed work anyway, and
// an evaluation waits for one run's time instead of the sum).
#pragma once

#include "evaluator/evaluation.h"

namespace ptxbench {

StageOutcome<SanitizeSection> sanitize(const EvalInputs& in);

}  // namespace ptxbench
