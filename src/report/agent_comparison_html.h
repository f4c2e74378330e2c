// The agent-vs-refinement comparison as ONE self-contained HTML page: the runs, the warnings, the
// Table 3 layout, and the Figure 14 curves as static inline SVG drawn here (log token axis, median
// step curves with their bootstrap bands), then every definition. No script at all: the
// Content-Security-Policy forbids scripts and network loads, and every text from the store (run
// names, model labels, definition names) goes through html_escape.
#pragma once

#include <string>

#include "report/agent_comparison.h"

namespace ptxbench::report {

/// The whole page.
std::string render_agent_comparison_html(const AgentComparison& c);
/// The comparison's sections alone (tables, charts, definitions; ids prefixed "agent-"), to embed
/// in another page that allows inline styles.
std::string agent_comparison_section_html(const AgentComparison& c);
/// One Figure 14 chart: <svg class="token-curve"> with, per run with counted trajectories, a band
/// (<path class="curve-band">) and a median step curve (<path class="curve-median">), each with
/// data-side="agent" or "refinement".
std::string token_curve_svg(const TokenCurve& curve, const std::string& title);

}  // namespace ptxbench::report
