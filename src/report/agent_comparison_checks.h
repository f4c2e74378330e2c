// Whether an agent run and a refinement run can be compared, and how far they are like for like:
// the refusals (InputError, saying why) and the warnings every output of the comparison prints.
#pragma once

#include <string>
#include <vector>

#include "report/agent_comparison.h"

namespace ptxbench::report {

/// InputError for N < 1 or a bootstrap option out of range.
void check_comparison_options(const AgentComparisonOptions& options);
/// InputError when N is below 1 (no --requests and an agent run without a budget) or above either
/// run's num_turns (its trajectories were not given N requests).
void check_requests(const AgentComparison& c);
/// The definitions both runs ran, in the agent run's order; InputError when there are none.
std::vector<std::string> shared_definitions(const ComparedRun& agent, const ComparedRun& refinement);
/// What leaves the runs comparable but not like for like: policies, budgets above N, definitions
/// only one ran, model labels whose calls name no common model, GPUs, prompt tags, evaluation
/// options, runs without token counts, runs still running or imported. `r` holds both runs.
std::vector<std::string> comparability_warnings(const Report& r, const AgentComparison& c);

}  // namespace ptxbench::report
