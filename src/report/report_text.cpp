#include "report/report_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "report/report_format.h"

namespace ptxbench::report {
namespace {

std::string clean(const std::string& s) { return terminal_safe(s); }

class TextTable {
 public:
  TextTable(std::vector<std::string> header, std::size_t left_columns) : m_left(left_columns) { m_rows.push_back(std::move(header)); }
  void row(std::vector<std::string> cells) {
    for (auto& c : cells) c = clean(c);
    m_rows.push_back(std::move(cells));
  }
  [[nodiscard]] std::string str() const { return text_table(m_rows, m_left); }

 private:
  std::size_t m_left;
  std::vector<std::vector<std::string>> m_rows;
};

std::string wrap(const std::string& text, const std::string& indent, std::size_t cols = 100) {
  return wrap_words(text, indent, cols);
}

std::vector<std::string> key_columns(const Report& r, const Group& g) {
  std::vector<std::string> c;
  if (r.runs.size() > 1) c.push_back(run_label(r, g.run_id));
  if (r.several_languages()) c.push_back(g.language);
  c.insert(c.end(), {g.model, g.definition});
  if (has_experiments(r)) c.push_back(g.experiment.empty() ? "-" : g.experiment);
  if (r.by == GroupBy::tag) c.push_back(g.tag);
  c.insert(c.end(), {g.gpu, std::to_string(g.metrics.counted)});
  return c;
}

std::vector<std::string> key_header(const Report& r) {
  std::vector<std::string> c;
  if (r.runs.size() > 1) c.push_back("Run");
  if (r.several_languages()) c.push_back("Language");
  c.insert(c.end(), {"Model", "Definition"});
  if (has_experiments(r)) c.push_back("Experiment");
  if (r.by == GroupBy::tag) c.push_back("Tag");
  c.insert(c.end(), {"GPU", "Traj"});
  return c;
}

// A table's title line, tagged in a report with fake-backend verdicts.
std::string title(const Report& r, const std::string& text) {
  return text + (r.provenance.fake() ? std::string(" ") + kFakeTag : "") + "\n";
}

std::string group_name(const Report& r, const Group& g) {
  const std::string variant = group_variant(g);
  return clean((r.runs.size() > 1 ? run_label(r, g.run_id) + " " : "") + g.model + " " + g.definition + " " +
               (variant.empty() ? "" : variant + " ") + g.gpu);
}

// A table with one row per group (but '(all)' rows without `pooled_rows`) and rule: the key
// columns on a group's first row only, then the rule, then `cells(group, rule)` under `value_headers`.
template <class Cells>
std::string rule_rows_table(const Report& r, const std::vector<InstructionRule>& rules, const std::vector<std::string>& value_headers,
                            bool pooled_rows, Cells cells) {
  auto header = key_header(r);
  const std::size_t keys = header.size();
  header.push_back("Rule");
  header.insert(header.end(), value_headers.begin(), value_headers.end());
  TextTable t(header, keys + 1);
  for (const auto& g : r.groups) {
    if (g.pooled && !pooled_rows) continue;
    for (std::size_t q = 0; q < rules.size(); ++q) {
      std::vector<std::string> row = q == 0 ? key_columns(r, g) : std::vector<std::string>(keys, "");
      row.push_back(rule_label(rules[q]));
      for (auto& c : cells(g, rules[q])) row.push_back(std::move(c));
      t.row(row);
    }
  }
  return t.str();
}

// A budget table with one row per group and rule and a column per budget T, each cell the value
// with its interval: the layout of the paper's Tables 1 and 9 with room for the intervals.
std::string budget_table_text(const Report& r, const BudgetTable& table, const std::vector<InstructionRule>& rules,
                              bool pooled_rows) {
  std::string out = title(r, fmt::format("{} ({}) at T = {}; {}", table_heading(table), table.unit, budgets_text(r.budgets),
                                         describe(r.missing)));
  out += wrap(table.note, "  ");
  std::vector<std::string> headers;
  for (int b : r.budgets) headers.push_back("T = " + std::to_string(b));
  return out + rule_rows_table(r, rules, headers, pooled_rows, [&table](const Group& g, InstructionRule rule) {
           std::vector<std::string> cells;
           for (std::size_t i = 0; i < g.metrics.budgets.size(); ++i) cells.push_back(budget_value(g, i, table, rule));
           return cells;
         });
}

std::string runs_table(const Report& r) {
  TextTable t({"", "Run", "Status", "Origin", "Language", "Model", "num_turns", "Trajectories", "Condition", "Name"}, 10);
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const auto& s = r.runs[i];
    t.row({"R" + std::to_string(i + 1), s.info.id, to_string(s.info.status), s.info.origin, s.language, s.info.model,
           std::to_string(s.num_turns), std::to_string(s.trajectories.size()), s.condition, s.info.notes});
  }
  return t.str();
}

// `pooled_rows`: --full (its '(all)' rows and the strict rule's notes), or the default tables.
std::string notes_text(const Report& r, bool pooled_rows) {
  std::string notes;
  for (const auto& s : r.runs)
    if (!s.no_pooled_row.empty()) notes += wrap(run_label(r, s.info.id) + " " + s.info.model + ": " + s.no_pooled_row, "  ");
  for (const auto& g : r.groups) {
    if (g.pooled && !pooled_rows) continue;
    if (auto n = group_notes(g, pooled_rows); !n.empty()) notes += wrap(group_name(r, g) + ": " + n, "  ");
  }
  return notes.empty() ? "" : "\nNotes\n" + notes;
}

std::string header_text(const Report& r) {
  std::string out = fmt::format("ptxbench report - store {} - {}\n", clean(r.store), r.generated_at);
  if (r.filters.any()) out += "Filtered: " + clean(r.filters.describe()) + "\n";
  out += "\n";
  if (auto mark = fake_mark(r); !mark.empty()) out += wrap("*** " + mark + " ***", "") + "\n";
  return out;
}

// The default: the runs, Table 1 and Table 9 per model x definition, the notes and where the rest is.
std::string paper_text(const Report& r) {
  std::string out = header_text(r) + title(r, "Runs") + runs_table(r);
  bool imported = false, options = false;
  for (const auto& g : r.groups) imported |= g.provenance.imported(), options |= g.provenance.options_changed();
  if (imported)
    out += wrap("IMPORTED runs hold another release's published outcomes, not measured here (no verdicts: strict-rule "
                "values n/a, reasoning tokens only).", "  ");
  if (options) out += wrap("Some verdicts ran with evaluation options off their defaults: see --full (Provenance).", "  ");
  out += "\n" + wrap(protocol_note(r) + " Rows: the paper's rule (target-instr.: its target instructions executed) and "
                     "unrestricted (any correct turn); n/a: not measured (T above num_turns); -: none. Traj: counted "
                     "trajectories.", "");
  for (const auto* table : paper_tables())
    out += "\n" + budget_table_text(r, *table, {InstructionRule::paper, InstructionRule::unrestricted}, false);
  out += notes_text(r, false);
  out += "\n" + wrap("More with --full: the median of bests, Fast_p, pass@k, the strict rule, '(all)' rows, Fast_p by language, "
                     "turn labels, transitions, tokens and the metric definitions; files with --csv, --json, --html FILE "
                     "(- for stdout).", "");
  return out;
}

std::string provenance_text(const Report& r) {
  std::string out = "\n" + title(r, "Provenance");
  bool any = false;
  for (const auto& g : r.groups)
    if (auto p = provenance_summary(g); !p.empty()) {
      out += wrap(group_name(r, g) + ": " + p, "  ");
      any = true;
    }
  if (!any)
    out += wrap(fmt::format("every one of the {} verdicts comes from a GPU evaluation here with the evaluator's default options",
                            r.provenance.verdicts),
                "  ");
  return out;
}

std::string pass_table_text(const Report& r, const std::vector<InstructionRule>& rules) {
  std::string out = "\n" + title(r, fmt::format("pass@k (%), T = {}; unbiased estimator over each group's trajectories", budgets_text(r.budgets)));
  out += wrap(definition_text("pass_at_k"), "  ");
  std::vector<std::string> headers;
  for (int k : r.pass_k) headers.push_back("pass@" + std::to_string(k));
  return out + rule_rows_table(r, rules, headers, true, [&r](const Group& g, InstructionRule rule) {
           std::vector<std::string> cells;
           for (int k : r.pass_k) cells.push_back(pass_values(g.metrics, k, rule));
           return cells;
         });
}

std::string language_table_text(const Report& r) {
  std::string out = "\n" + title(r, fmt::format("Fast_p by language (CUDA-PTX beside Triton; every reported run of a language pooled), T = {}: "
                                                "target-instruction (unrestricted)", budgets_text(r.budgets)));
  out += wrap(language_note(), "  ");
  std::vector<std::string> header = {"Language", "Model", "Definition", "GPU", "Traj"};
  for (const auto* table : language_tables()) header.push_back(table->title);
  TextTable t(header, 4);
  for (const auto& g : r.language_groups) {
    std::vector<std::string> row = {g.language, g.model, g.definition, g.gpu, std::to_string(g.metrics.counted)};
    for (const auto* table : language_tables()) row.push_back(budget_cell(g.metrics, *table));
    t.row(row);
  }
  return out + t.str();
}

std::string labels_table_text(const Report& r) {
  std::string out =
      "\n" + title(r, "Turn labels (judged turns actually run, no carry-forward; TO = timeout, Infra (excl.) = INFRA_ERROR, out of every rate)");
  auto header = key_header(r);
  const std::size_t keys = header.size();
  for (auto l : kAllLabels) header.push_back(label_short(l));
  TextTable t(header, keys - 1);
  for (const auto& g : r.groups) {
    auto row = key_columns(r, g);
    for (auto l : kAllLabels) row.push_back(std::to_string(g.metrics.labels.total[static_cast<std::size_t>(label_index(l))]));
    t.row(row);
  }
  return out + t.str();
}

std::string transitions_text(const Report& r) {
  std::string out = "\n" + title(r, "Error-state transitions, turn n -> n+1 (most frequent first)");
  for (const auto& g : r.groups) {
    std::vector<std::tuple<int64_t, int, int>> edges;
    for (int a = 0; a < kLabelCount; ++a)
      for (int b = 0; b < kLabelCount; ++b)
        if (auto n = g.metrics.transitions.counts[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)]) edges.emplace_back(n, a, b);
    std::stable_sort(edges.begin(), edges.end(), [](const auto& x, const auto& y) { return std::get<0>(x) > std::get<0>(y); });
    std::string line;
    for (const auto& [n, a, b] : edges)
      line += fmt::format("{}{} -> {}: {}", line.empty() ? "" : "; ", label_name(kAllLabels[static_cast<std::size_t>(a)]),
                          label_name(kAllLabels[static_cast<std::size_t>(b)]), n);
    out += wrap(group_name(r, g) + ": " + (line.empty() ? "none" : line), "  ");
  }
  return out;
}

// "median / mean (total)" of one token kind.
std::string token_cell(const std::optional<double>& median, const std::optional<double>& mean, int64_t total) {
  return format_optional(median, 0) + " / " + format_optional(mean, 0) + " (" + std::to_string(total) + ")";
}

std::string tokens_table_text(const Report& r) {
  std::string out = "\n" + title(r, "Tokens per trajectory (cumulative per trajectory: median / mean over all trajectories of the group; total in parentheses)");
  auto header = key_header(r);
  const std::size_t keys = header.size();
  header.back() = "All traj";
  for (const char* h : {"Prompt", "Completion", "Reasoning", "Cached", "Total"}) header.push_back(h);
  TextTable t(header, keys - 1);
  for (const auto& g : r.groups) {
    auto row = key_columns(r, g);
    row.back() = std::to_string(g.metrics.tokens.trajectories);
    const auto& s = g.metrics.tokens;
    row.push_back(token_cell(s.median_prompt, s.mean_prompt, s.total.prompt));
    row.push_back(token_cell(s.median_completion, s.mean_completion, s.total.completion));
    row.push_back(token_cell(s.median_reasoning, s.mean_reasoning, s.total.reasoning));
    row.push_back(token_cell(s.median_cached, s.mean_cached, s.total.cached));
    row.push_back(token_cell(s.median_total, s.mean_total, s.total.total()));
    t.row(row);
  }
  return out + t.str();
}

std::string reasoning_table_text(const Report& r) {
  std::string out = "\n" + title(r, "Reasoning tokens by turn (median [calls]; the paper's Figure 7)");
  std::size_t turns = 0;
  for (const auto& g : r.groups)
    if (!g.metrics.reasoning.empty()) turns = std::max<std::size_t>(turns, static_cast<std::size_t>(g.metrics.reasoning.back().turn));
  auto header = key_header(r);
  const std::size_t keys = header.size();
  for (std::size_t n = 1; n <= turns; ++n) header.push_back("T" + std::to_string(n));
  TextTable t(header, keys - 1);
  for (const auto& g : r.groups) {
    auto row = key_columns(r, g);
    std::vector<std::string> cells(turns, "-");
    for (const auto& x : g.metrics.reasoning)
      cells[static_cast<std::size_t>(x.turn - 1)] = format_number(x.median, 0) + " [" + std::to_string(x.calls) + "]";
    row.insert(row.end(), cells.begin(), cells.end());
    t.row(row);
  }
  return out + t.str();
}

std::string token_ratio_text(const Report& r) {
  if (r.comparisons.empty()) return "";
  std::string out = "\n" + title(r, "Token ratio: median cumulative tokens per trajectory of the first run / of the other run");
  TextTable t({"First", "Other", "Definition", "Prompt", "Completion", "Reasoning", "Cached", "Total"}, 3);
  for (const auto& c : r.comparisons)
    t.row({run_label(r, c.reference_run), run_label(r, c.run), c.definition, format_optional(c.ratio.prompt, 3),
           format_optional(c.ratio.completion, 3), format_optional(c.ratio.reasoning, 3), format_optional(c.ratio.cached, 3),
           format_optional(c.ratio.total, 3)});
  return out + t.str();
}

std::string definitions_text() {
  std::string out = "\nDefinitions\n";
  for (const auto& d : metric_definitions()) out += wrap(d.name + ": " + d.text, "  ");
  out += "\nStatus -> turn label\n";
  for (const auto& m : label_mapping()) out += wrap(m.status + " -> " + m.label + (m.note.empty() ? "" : ": " + m.note), "  ");
  return out;
}

// --full: every table under the paper's, the strict and the unrestricted rule, then the rest.
std::string full_text(const Report& r) {
  std::string out = header_text(r) + title(r, "Runs") + runs_table(r) + provenance_text(r);
  out += "\n" + wrap(protocol_note(r) + " Rows: the paper's rule (target-instr.: the target instructions executed, count > 0), "
                                         "unrestricted (any correct turn), and the strict rule (tensor-core FLOP coverage). n/a: "
                                         "T above the run's num_turns (not measured), or unknown; -: nothing to measure. Traj: "
                                         "counted trajectories. Definitions at the end.",
                      "");
  const std::vector<InstructionRule> rules = {InstructionRule::paper, InstructionRule::unrestricted, InstructionRule::strict};
  for (const auto& table : budget_tables()) out += "\n" + budget_table_text(r, table, rules, true);
  out += wrap(strict_note(), "  ");
  out += pass_table_text(r, rules) + language_table_text(r) + labels_table_text(r) + transitions_text(r) + tokens_table_text(r) +
         reasoning_table_text(r) + token_ratio_text(r);
  return out + notes_text(r, true) + definitions_text();
}

}  // namespace

std::string render_text(const Report& r, TextDetail detail) {
  return detail == TextDetail::paper ? paper_text(r) : full_text(r);
}

}  // namespace ptxbench::report
