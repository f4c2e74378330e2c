// Machine-readable reports: one JSON document (schema "ptxbench.report", the metric definitions
// in it) and one tidy CSV (a row per group x metric x budget x p / k / label, with the bootstrap
// interval where there is one, the missing-turns rule and the group's provenance marks) whose metric
// definitions go to a side file (report_csv_metrics), so no row repeats them.
#pragma once

#include <string>

#include "common/json_check.h"
#include "report/report_data.h"

namespace ptxbench::report {

inline constexpr const char* kReportSchema = "ptxbench.report";
// 2: groups.tag, group_by, tokens medians, reasoning_by_turn; 3: runs.language, groups.language,
// languages (every run of a language pooled), the CSV's language column; 4: missing_turns (the
// paper's rule by default), bootstrap intervals (*_interval, max_interval, fast lower/upper),
// pass_at_k, groups.experiment, filters, strict values null where unknown; the tidy CSV
inline constexpr int kReportSchemaVersion = 4;

ordered_json report_json(const Report& r);
std::string report_csv(const Report& r);
/// The CSV's side file: one row per metric the CSV holds (metric, definition key, name, text), and
/// the rules its missing_turns and lower/upper columns follow. `report --csv F` writes it beside F
/// (metrics_csv_path).
std::string report_csv_metrics(const Report& r);
/// "out/report.csv" -> "out/report.metrics.csv"; "out/report" -> "out/report.metrics.csv".
std::string metrics_csv_path(const std::string& csv_path);
/// RFC 4180 field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);

}  // namespace ptxbench::report
