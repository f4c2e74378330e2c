// The agent-vs-refinement comparison, machine-readable: one JSON document (schema
// "ptxbench.agent_comparison", its definitions in it) and one long-format CSV with a row per table
// value and per curve point, each row naming the definition that states its metric.
#pragma once

#include <string>

#include "common/json_check.h"

namespace ptxbench::report {

struct AgentComparison;

/// Schema "ptxbench.agent_comparison": runs, N, bootstrap, warnings, definitions, rows (per side
/// and rule: bests per trajectory, median and band), curves (grid, medians, bands).
ordered_json agent_comparison_json(const AgentComparison& c);
/// Long format: agent_run, refinement_run, definition, side, rule, metric, tokens, value, lower,
/// upper, metric_definition, provenance; a row per table value and per curve point.
std::string agent_comparison_csv(const AgentComparison& c);

}  // namespace ptxbench::report
