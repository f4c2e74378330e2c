// The agent-vs-refinement comparison on the terminal: the runs, the warnings, the Table 3 layout
// (the paper's rule; the strict rule and unrestricted beside it), the token ratio by kind, the
// Figure 14 curves as short tables at 1-2-5 token budgets, and the definitions.
#pragma once

#include <string>

namespace ptxbench::report {

struct AgentComparison;

std::string render_agent_comparison_text(const AgentComparison& c);

}  // namespace ptxbench::report
