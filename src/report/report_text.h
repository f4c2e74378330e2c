// The terminal report. By default the paper's Table 1 (turn correctness) and Table 9 (best
// speedup, max) per model x definition, with bootstrap intervals, the missing-turns rule named;
// with --full also the other metric tables (median, Fast_p, pass@k, the strict rule, '(all)' rows),
// Fast_p by language, turn labels, transitions, tokens, token ratios and the definitions in full.
#pragma once

#include <string>

#include "report/report_data.h"

namespace ptxbench::report {

enum class TextDetail {
  paper,  ///< Table 1 and Table 9 (the default: a screenful per model)
  full,   ///< everything (`report --full`)
};

std::string render_text(const Report& r, TextDetail detail = TextDetail::paper);

}  // namespace ptxbench::report
