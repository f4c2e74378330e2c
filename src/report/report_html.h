// The report as ONE self-contained HTML file (no network needed to open it): the paper-style
// tables, Fast_p curves (inline SVG drawn by an inline script from an embedded JSON block), turn
// labels per turn and transition heatmaps (inline SVG), tokens, and a per-trajectory drill-down
// with every turn's verdict, candidate, answer and feedback.
//
// Model output is untrusted: every text goes through html_escape, the embedded JSON through
// json_for_script, and a Content-Security-Policy allows only our own script (by its SHA-256),
// no inline event handlers and no network loads, so injected markup can neither run nor fetch.
#pragma once

#include <string>
#include <string_view>

#include "common/json_check.h"
#include "report/report_data.h"

namespace ptxbench::report {

std::string render_html(const Report& r);

/// Text or attribute value: & < > " ' escaped.
std::string html_escape(std::string_view s);
/// JSON safe inside <script type="application/json">: '<', '>', '&' written as \u escapes (so no
/// "</script>" or "<!--" can appear); invalid UTF-8 replaced.
std::string json_for_script(const ordered_json& j);
/// "sha256-<base64>" of a script's text, for the CSP.
std::string csp_hash(std::string_view script);

}  // namespace ptxbench::report
