// The JSON forms of the metric and provenance structs that both machine-readable outputs hold (the
// report's, report_export.h, and the agent comparison's), so they cannot drift apart.
#pragma once

#include <optional>

#include "common/json_check.h"
#include "report/metrics.h"
#include "report/provenance.h"

namespace ptxbench::report {

/// The value, or null when absent.
ordered_json optional_json(const std::optional<double>& v);
/// {prompt, completion, reasoning, cached, total}
ordered_json tokens_json(const TokenCounts& t);
/// The medians per trajectory of a token summary: {prompt, completion, reasoning, cached, total}.
ordered_json token_medians_json(const TokenSummary& s);
/// {trajectories, total: tokens_json, mean_per_trajectory, median_per_trajectory}
ordered_json token_summary_json(const TokenSummary& s);
/// {prompt, completion, reasoning, cached, total}, null where a ratio is absent.
ordered_json token_ratio_json(const TokenRatio& r);
/// {verdicts, fake_backend_verdicts, changed_options: [{option, value, default, verdicts}], imported_trajectories}
ordered_json provenance_json(const Provenance& p);

}  // namespace ptxbench::report
