// `ptxbench run --dry-run --config FILE`: checks a run config end to end without a key, a network
// or a GPU, and says what the run would do. The config's local checks run as for a real run; then
// one trajectory per definition (or seed) and prompt tag goes through the real turn loop with a
// fake model (a wrong kernel, then one past the target) and the fake evaluation backend in this
// process, on a run store in memory: prompts, extraction, evaluation requests, feedback, repair
// notes and the stop rule are all exercised, and nothing is written.
#pragma once

#include <cstdio>

#include "agent/agent_run.h"
#include "agent/run_config.h"

namespace ptxbench {

/// Prints the plan (definitions, prompt tags, trajectories and turns, the stop rule, token counts
/// of each first prompt) and the trajectories it drove to `out`. InputError for a bad config, as a
/// real run would refuse it; Error when a checked trajectory could not go through the loop.
void dry_run(const RunConfig& config, const std::string& config_name, const AgentRunSetup& setup, std::FILE* out = stdout);

}  // namespace ptxbench
