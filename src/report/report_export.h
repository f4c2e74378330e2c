// Machine-readable reports: one JSON document (schema "ptxbench.report") and one long-format CSV
// (a row per group x metric x budget x p / label, its last column the group's provenance marks),
// both stating the metric definitions.
#pragma once

#include <string>

#include "common/json_check.h"
#include "report/report_data.h"

namespace ptxbench::report {

inline constexpr const char* kReportSchema = "ptxbench.report";
// 2: groups.tag, group_by, tokens medians, reasoning_by_turn; 3: runs.language, groups.language,
// languages (every run of a language pooled), the CSV's language column
inline constexpr int kReportSchemaVersion = 3;

ordered_json report_json(const Report& r);
std::string report_csv(const Report& r);
/// RFC 4180 field: quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);

}  // namespace ptxbench::report
