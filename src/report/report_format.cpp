#include "report/report_format.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "common/enum_names.h"

namespace ptxbench::report {
namespace {

std::optional<double> fast(const BudgetMetrics& m, InstructionRule rule, double p) {
  if (m.trajectories == 0) return std::nullopt;
  return 100.0 * fast_p(m.bests(rule), p);
}

std::optional<Interval> percent(const std::optional<Interval>& x) {
  if (!x) return std::nullopt;
  return Interval{100.0 * x->lower, 100.0 * x->upper};
}

// The strict rule's value at a budget is unknown (not a lower bound): no correct slot has a verdict.
bool strict_unknown(const BudgetMetrics& m, InstructionRule rule) {
  return rule == InstructionRule::strict && m.strict_unknown_only();
}

}  // namespace

const std::vector<BudgetTable>& budget_tables() {
  static const std::vector<BudgetTable> tables = {
      {"turn_correctness", "Turn correctness rate",
       "correct slots / (counted trajectories x T - INFRA_ERROR slots), missing slots as the missing-turns rule says",
       [](const BudgetMetrics& m, InstructionRule rule) {
         const auto& v = m.rate(rule);
         return v ? std::optional<double>(100.0 * *v) : std::nullopt;
       },
       1, "%", nullptr,
       [](const BudgetIntervals& iv, InstructionRule rule) -> std::optional<Interval> {
         const auto& x = iv.rate_of(rule);
         if (!x) return std::nullopt;
         return Interval{100.0 * x->lower, 100.0 * x->upper};
       },
       "Table 1"},
      {"best_speedup", "Best speedup (max over trajectories)",
       "max over trajectories of the best correct speedup within the first T turns; '-': no correct timed turn",
       [](const BudgetMetrics& m, InstructionRule rule) { return m.max_of_bests(rule); }, 3, "x", nullptr,
       [](const BudgetIntervals& iv, InstructionRule rule) { return iv.max_best_of(rule); }, "Table 9"},
      {"median_best_speedup", "Median of per-trajectory best speedups",
       "median over the trajectories that have a correct timed turn within T; [n=K]: how many",
       [](const BudgetMetrics& m, InstructionRule rule) { return m.median_of_bests(rule); }, 3, "x",
       [](const BudgetMetrics& m, InstructionRule rule) { return m.with_best_of(rule); }, nullptr, ""},
      {"fast_1", "Fast_1 (best speedup > 1.0)",
       "share of ALL counted trajectories whose best speedup within T is strictly > 1.0",
       [](const BudgetMetrics& m, InstructionRule rule) { return fast(m, rule, 1.0); }, 1, "%", nullptr,
       [](const BudgetIntervals& iv, InstructionRule rule) { return percent(iv.fast_of(rule, 1.0)); }, ""},
      {"fast_0", "Fast_0 (a correct, timed turn)",
       "share of ALL counted trajectories whose best speedup within T is strictly > 0",
       [](const BudgetMetrics& m, InstructionRule rule) { return fast(m, rule, 0.0); }, 1, "%", nullptr,
       [](const BudgetIntervals& iv, InstructionRule rule) { return percent(iv.fast_of(rule, 0.0)); }, ""},
  };
  return tables;
}

std::vector<const BudgetTable*> paper_tables() {
  std::vector<const BudgetTable*> out;
  for (const auto& t : budget_tables())
    if (!t.paper_number.empty()) out.push_back(&t);
  return out;
}

std::string table_heading(const BudgetTable& table) {
  return table.paper_number.empty() ? table.title : table.paper_number + ". " + table.title;
}

std::string rule_label(InstructionRule rule) {
  constexpr EnumName<InstructionRule> kLabels[] = {{InstructionRule::paper, "target-instr."},
                                                   {InstructionRule::unrestricted, "unrestricted"},
                                                   {InstructionRule::strict, "strict"}};
  return enum_name(kLabels, rule);
}

std::vector<const BudgetTable*> language_tables() {
  std::vector<const BudgetTable*> out;
  for (const auto& t : budget_tables())
    if (t.key.rfind("fast_", 0) == 0) out.push_back(&t);
  return out;
}

std::string language_note() {
  return "A run's language is its config's \"language\" (cuda: CUDA-PTX candidates, triton: Triton candidates; runs stored "
         "without it are cuda). Each row pools the trajectories of every reported run of that language, model and GPU "
         "(an '(all)' row where that spans several definitions); Fast_p is over ALL counted trajectories of the row.";
}

std::string terminal_safe(const std::string& s) {
  std::string out = s;
  for (auto& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string text_table(const std::vector<std::vector<std::string>>& rows, std::size_t left_columns) {
  std::vector<std::size_t> w;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (w.size() <= i) w.resize(i + 1, 0);
      w[i] = std::max(w[i], display_width(terminal_safe(r[i])));
    }
  std::string out;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    std::string line = "  ";
    for (std::size_t i = 0; i < rows[k].size(); ++i) {
      std::string cell = terminal_safe(rows[k][i]), pad(w[i] - display_width(cell), ' ');
      line += i < left_columns ? cell + pad : pad + cell;
      if (i + 1 < rows[k].size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
    if (k == 0) {
      std::size_t total = 0;
      for (auto x : w) total += x + 2;
      out += "  " + std::string(total > 2 ? total - 2 : 0, '-') + "\n";
    }
  }
  return out;
}

std::string wrap_words(const std::string& text, const std::string& indent, std::size_t cols) {
  std::istringstream in(text);
  std::string word, line = indent, out;
  while (in >> word) {
    if (display_width(line) + 1 + display_width(word) > cols && display_width(line) > display_width(indent)) {
      out += line + "\n";
      line = indent;
    }
    line += (display_width(line) > display_width(indent) ? " " : "") + word;
  }
  return out + line + "\n";
}

std::string format_number(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string format_optional(const std::optional<double>& v, int decimals, const std::string& none) {
  return v ? format_number(*v, decimals) : none;
}

std::string budget_values(const GroupMetrics& g, const BudgetTable& table, InstructionRule rule) {
  std::string out;
  for (std::size_t i = 0; i < g.budgets.size(); ++i) {
    const auto& m = g.budgets[i];
    if (i) out += " / ";
    if (!m.measured) {
      out += "n/a";
      continue;
    }
    if (strict_unknown(m, rule)) {
      out += "n/a";
      continue;
    }
    auto value = table.value(m, rule);
    out += format_optional(value, table.decimals);
    if (value && table.count) out += fmt::format(" [n={}]", table.count(m, rule));
    if (rule == InstructionRule::strict && m.strict_unknown_slots > 0) out += "*";
  }
  return out;
}

std::string budget_value(const Group& g, std::size_t i, const BudgetTable& table, InstructionRule rule, bool with_interval) {
  const auto& m = g.metrics.budgets.at(i);
  if (!m.measured || strict_unknown(m, rule)) return "n/a";
  auto value = table.value(m, rule);
  std::string out = format_optional(value, table.decimals);
  if (value && table.count) out += fmt::format(" [n={}]", table.count(m, rule));
  if (value && with_interval && table.interval && i < g.intervals.size())
    if (auto iv = table.interval(g.intervals[i], rule))
      out += fmt::format(" [{}, {}]", format_number(iv->lower, table.decimals), format_number(iv->upper, table.decimals));
  if (rule == InstructionRule::strict && m.strict_unknown_slots > 0) out += "*";
  return out;
}

std::string pass_values(const GroupMetrics& g, int k, InstructionRule rule) {
  std::string out;
  for (std::size_t i = 0; i < g.budgets.size(); ++i) {
    const auto& m = g.budgets[i];
    if (i) out += " / ";
    if (!m.measured || strict_unknown(m, rule)) {
      out += "n/a";
      continue;
    }
    auto v = m.pass_at(k, rule);
    out += v ? format_number(100.0 * *v, 1) : "n/a";
    if (v && rule == InstructionRule::strict && m.strict_unknown_slots > 0) out += "*";
  }
  return out;
}

std::string protocol_note(const Report& r) {
  return fmt::format("{}. [lo, hi]: {:g}% percentile-bootstrap interval over the group's trajectories (B = {}, seed {}).",
                     capitalized(describe(r.missing)), 100.0 * r.bootstrap.confidence, r.bootstrap.resamples, r.bootstrap.seed);
}

std::string capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string group_variant(const Group& g) { return !g.experiment.empty() ? g.experiment : g.tag; }

bool has_experiments(const Report& r) {
  return std::any_of(r.groups.begin(), r.groups.end(), [](const Group& g) { return !g.experiment.empty(); });
}

std::string budget_cell(const GroupMetrics& g, const BudgetTable& table) {
  return budget_values(g, table, InstructionRule::paper) + " (" + budget_values(g, table, InstructionRule::unrestricted) + ")";
}

const char* const kStrictColumn = "Strict rule (coverage)";

std::string strict_note() {
  return "Strict rule: the same metric counting only turns whose verdict affirms target_instruction.strict_correct (" +
         strict_target_rule() +
         "). *: a lower bound - some correct turns within T have no strict verdict (stored before the field existed, "
         "or coverage not measured), counted as not strict correct; the notes say how many. n/a: none of them has one "
         "(e.g. an imported run), so the value is unknown.";
}

std::string budgets_text(const std::vector<int>& budgets) {
  std::string s;
  for (std::size_t i = 0; i < budgets.size(); ++i) s += (i ? " / " : "") + std::to_string(budgets[i]);
  return s;
}

std::string run_label(const Report& r, const std::string& run_id) {
  for (std::size_t i = 0; i < r.runs.size(); ++i)
    if (r.runs[i].info.id == run_id) return "R" + std::to_string(i + 1);
  return "R?";
}

std::string trajectory_name(const TrajectoryDetail& t) {
  return t.info.key.definition + "/" + t.info.key.prompt_tag + "#" + std::to_string(t.info.key.index);
}

std::string group_notes(const Group& g, bool strict) {
  std::string s;
  int64_t left_out = g.metrics.trajectories - g.metrics.counted;
  if (left_out) s += fmt::format("{} not counted (no judged turn other than INFRA_ERROR)", left_out);
  if (g.metrics.incomplete)
    s += fmt::format("{}{} incomplete (failed or still running)", s.empty() ? "" : "; ", g.metrics.incomplete);
  if (g.metrics.short_trajectories)
    s += fmt::format("{}{} with fewer judged turns than the run's budget (their missing turns: {})", s.empty() ? "" : "; ",
                     g.metrics.short_trajectories,
                     g.metrics.budgets.empty() || g.metrics.budgets.front().missing_rule == MissingTurns::not_correct
                         ? "not correct"
                         : "the last verdict carried forward");
  if (strict && g.metrics.strict_unknown_turns)
    s += fmt::format("{}strict rule unknown for {} of {} correct turns (no target_instruction.strict_correct in the verdict: "
                     "counted as not strict correct)",
                     s.empty() ? "" : "; ", g.metrics.strict_unknown_turns, g.metrics.correct_turns);
  return s;
}

std::string fake_mark(const Report& r) {
  if (!r.provenance.fake()) return "";
  return fmt::format("FAKE BACKEND: {} of {} verdicts come from the evaluation service's fake backend (no GPU ran; "
                     "reported with --allow-fake), not from measurements",
                     r.provenance.fake_verdicts, r.provenance.verdicts);
}

std::string provenance_summary(const Group& g) {
  std::string s;
  const auto& p = g.provenance;
  if (p.fake()) s = fmt::format("fake backend ({} of {} verdicts)", p.fake_verdicts, p.verdicts);
  if (p.options_changed()) s += (s.empty() ? "" : "; ") + std::string("evaluation options off their defaults: ") + describe_changes(p);
  if (p.imported())
    s += (s.empty() ? "" : "; ") + fmt::format("IMPORTED ({} trajectories; not measured here, no verdicts, reasoning tokens only)",
                                               p.imported_trajectories);
  return s;
}

std::string provenance_flags(const Provenance& p) {
  std::string s = p.fake() ? "fake_backend" : "";
  if (p.options_changed()) s += s.empty() ? "options_changed" : ";options_changed";
  if (p.imported()) s += s.empty() ? "imported" : ";imported";
  return s;
}

}  // namespace ptxbench::report
