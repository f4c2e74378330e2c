// The paper-style tables shared by the terminal and HTML outputs: which metric each table shows
// and how a cell reads ("a / b / c (a' / b' / c')": the target-instruction value at each budget,
// then the unrestricted one in parentheses; the strict rule's values beside them), and the marks
// of provenance, so both outputs say exactly the same thing.
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
  /// The value at one budget under a target-instruction rule. Absent: nothing to show.
  std::function<std::optional<double>(const BudgetMetrics&, InstructionRule)> value;
  int decimals = 1;
  std::string unit;  ///< appended to the caption, e.g. "%" or "x"
  /// Where set, how many values a cell's value rests on (the median's n), printed as " [n=3]".
  std::function<int64_t(const BudgetMetrics&, InstructionRule)> count = nullptr;
  /// Where set, the value's bootstrap interval (in the value's unit), printed as " [lo, hi]".
  std::function<std::optional<Interval>(const BudgetIntervals&, InstructionRule)> interval = nullptr;
  /// The paper's number for the table ("Table 1"), "" for tables of ours.
  std::string paper_number;
};
/// Table 1 (turn correctness), Table 9 (best speedup, max), the median of bests, Fast_1, Fast_0.
const std::vector<BudgetTable>& budget_tables();
/// The tables the default terminal report shows: the paper's Table 1 and Table 9.
std::vector<const BudgetTable*> paper_tables();
/// "Table 1. Turn correctness rate" or the title alone for a table of ours.
std::string table_heading(const BudgetTable& table);
/// The rule a table row gives: "target-instr." (the paper's), "unrestricted", "strict".
std::string rule_label(InstructionRule rule);
/// One value of a group at budget index `i`: "38.5 [24.0, 53.1]" (with the interval where the table
/// has one and `with_interval`), "1.300 [n=2]" (with the count), a trailing '*' for a strict lower
/// bound, "n/a" where T was not measured or the strict value is unknown, "-" where there is none.
std::string budget_value(const Group& g, std::size_t i, const BudgetTable& table, InstructionRule rule, bool with_interval = true);
/// "a / b / c" of pass@k at every budget under `rule` (percent, 1 decimal; n/a above n).
std::string pass_values(const GroupMetrics& g, int k, InstructionRule rule);
/// `s` with its first letter upper case (a rule's description opening a sentence).
std::string capitalized(std::string s);
/// The missing-turns rule and the intervals in one sentence, as every table caption states them.
std::string protocol_note(const Report& r);
/// The budget tables the per-language table shows (Fast_1, Fast_0), and what it pools.
std::vector<const BudgetTable*> language_tables();
std::string language_note();

/// "a / b / c (a' / b' / c')" (paper rule, then unrestricted); "n/a" at an unmeasured budget, "-"
/// where there is no value.
std::string budget_cell(const GroupMetrics& g, const BudgetTable& table);
/// "a / b / c" under one rule (with " [n=K]" after each value of a table that has a count); under
/// the strict rule a value is followed by '*' where correct turns without a strict verdict make it a
/// lower bound, and is "n/a" where no correct turn has one (unknown).
std::string budget_values(const GroupMetrics& g, const BudgetTable& table, InstructionRule rule);
/// The strict columns' caption and what '*' means.
extern const char* const kStrictColumn;
std::string strict_note();

/// A group's display name beside its definition: the experiment of an imported run, the tag with
/// --by tag ("" for neither).
std::string group_variant(const Group& g);
/// Whether any group of the report has an experiment (the tables then get an Experiment column).
bool has_experiments(const Report& r);

/// A stored name or text as a terminal may print it: control characters become '?' (names come from
/// configs and stores: no escape sequences reach the terminal).
std::string terminal_safe(const std::string& s);
/// Columns a UTF-8 string takes on a terminal (one per code point).
std::size_t display_width(const std::string& s);
/// Rows (the first is the header) as a terminal table: columns left-aligned up to `left_columns`,
/// right-aligned after, a rule under the header; every cell through terminal_safe.
std::string text_table(const std::vector<std::vector<std::string>>& rows, std::size_t left_columns);
/// `text` re-flowed into lines of at most `cols` columns, each starting with `indent`.
std::string wrap_words(const std::string& text, const std::string& indent, std::size_t cols = 100);
std::string format_number(double v, int decimals);
std::string format_optional(const std::optional<double>& v, int decimals, const std::string& none = "-");
/// "1 / 4 / 8"
std::string budgets_text(const std::vector<int>& budgets);
/// The GPU of a group, or "-".
std::string run_label(const Report& r, const std::string& run_id);  ///< "R1", "R2", ... in the order asked
std::string trajectory_name(const TrajectoryDetail& t);  ///< definition/tag#index
/// Counts and why a trajectory was not counted / is incomplete, and correct turns without a strict
/// verdict, as a sentence for the notes.
/// `strict`: include the strict-unknown sentence (outputs that show the strict rule).
std::string group_notes(const Group& g, bool strict = true);
/// The fake-backend banner of a report with fake verdicts ("" without them), and the tag every
/// table title of such a report carries.
std::string fake_mark(const Report& r);
inline constexpr const char* kFakeTag = "[FAKE BACKEND: not GPU measurements]";
/// Provenance of a group in a few words: "fake backend (3 of 3 verdicts); options changed: ..." or "".
std::string provenance_summary(const Group& g);
/// The CSV provenance column: "", "fake_backend", "options_changed" or both joined by ';'.
std::string provenance_flags(const Provenance& p);

}  // namespace ptxbench::report
