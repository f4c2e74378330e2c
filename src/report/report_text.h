// The terminal report: the paper-style tables (Table 1 / Table 9 layout: "a / b / c (a' / b' / c')"),
// turn labels, transitions, tokens, token ratios, and the metric definitions in full.
#pragma once

#include <string>

#include "report/report_data.h"

namespace ptxbench::report {

std::string render_text(const Report& r);

}  // namespace ptxbench::report
