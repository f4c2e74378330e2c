// The paper-style tables shared by the terminal and HTML outputs: which metric each table shows
// and how a cell reads ("a / b / c (a' / b' / c')": the target-instruction value at each budget,
// then the unrestricted one in parentheses), so both outputs say exactly the same thing.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "report/report_data.h"

namespace ptxbench::report {

/// One budget table: a title, the note stating what a cell is, and how a value is read.
struct BudgetTable {
  std::string key;    ///< "turn_correctness", ... (HTML ids)
  std::string title;
  std::string note;
  /// The value at one budget; `target`: the target-instruction variant. Absent: nothing to show.
  std::function<std::optional<double>(const BudgetMetrics&, bool target)> value;
  int decimals = 1;
  std::string unit;  ///< appended to the caption, e.g. "%" or "x"
};
const std::vector<BudgetTable>& budget_tables();

/// "a / b / c (a' / b' / c')"; "n/a" at an unmeasured budget, "-" where there is no value.
std::string budget_cell(const GroupMetrics& g, const BudgetTable& table);
/// Just the target-instruction half ("a / b / c") or the unrestricted one.
std::string budget_values(const GroupMetrics& g, const BudgetTable& table, bool target);

std::string format_number(double v, int decimals);
std::string format_optional(const std::optional<double>& v, int decimals, const std::string& none = "-");
/// "1 / 4 / 8"
std::string budgets_text(const std::vector<int>& budgets);
/// The GPU of a group, or "-".
std::string run_label(const Report& r, const std::string& run_id);  ///< "R1", "R2", ... in the order asked
std::string trajectory_name(const TrajectoryDetail& t);  ///< definition/tag#index
/// Counts and why a trajectory was not counted / is incomplete, as a sentence for the notes.
std::string group_notes(const Group& g);

}  // namespace ptxbench::report
