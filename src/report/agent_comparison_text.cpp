#include "report/agent_comparison_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/agent_comparison.h"
#include "report/report_format.h"

namespace ptxbench::report {
namespace {

using Rows = std::vector<std::vector<std::string>>;

std::string clean(const std::string& s) { return terminal_safe(s); }

std::string wrap(const std::string& text, const std::string& indent, std::size_t cols = 100) {
  return wrap_words(clean(text), indent, cols);
}

std::string title_tag(const AgentComparison& c) { return c.fake() ? std::string(" ") + kFakeTag : ""; }

// "95%": the bootstrap intervals' confidence.
std::string confidence_text(const AgentComparison& c) { return fmt::format("{:g}%", 100.0 * c.bootstrap.confidence); }

std::string speedup_cell(const RuleBests& b) {
  if (!b.median) return "-";
  std::string s = format_number(*b.median, 3);
  if (b.band) s += " [" + format_number(b.band->lower, 3) + ", " + format_number(b.band->upper, 3) + "]";
  return s;
}

std::string qualified_cell(const RuleBests& b, int64_t counted_n) { return fmt::format("{}/{}", b.with_qualified, counted_n); }

// The median with its band, and "*" under the strict rule where it is a lower bound.
std::string rule_cell(const ComparisonSide& s, InstructionRule rule) {
  std::string cell = speedup_cell(s.rule(rule));
  if (rule == InstructionRule::strict && s.strict_unknown_turns > 0 && cell != "-") cell += "*";
  return cell;
}

// A curve's value at x: its value at the largest grid point <= x (the step function).
double curve_value(const TokenCurve& c, const CurveSide& side, double at_zero, double x) {
  auto it = std::upper_bound(c.tokens.begin(), c.tokens.end(), x);
  if (it == c.tokens.begin() || side.median.empty()) return at_zero;
  return side.median[static_cast<std::size_t>(it - c.tokens.begin() - 1)];
}

// 1-2-5 ticks within [lo, hi], then hi itself.
std::vector<double> nice_ticks(double lo, double hi) {
  std::vector<double> t;
  for (double decade = 1.0; decade <= hi * 10; decade *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (double x = m * decade; x >= lo && x < hi) t.push_back(x);
  t.push_back(hi);
  return t;
}

std::string header_text(const AgentComparison& c) {
  std::string out = fmt::format("ptxbench report: agent vs refinement - store {} - {}\n\n", clean(c.store), c.generated_at);
  if (c.fake()) out += wrap("*** " + fake_mark(c) + " ***", "") + "\n";
  return out;
}

std::string runs_text(const AgentComparison& c) {
  std::string out = "Runs" + title_tag(c) + "\n";
  Rows rows = {{"", "Run", "Status", "Origin", "Policy", "Model", "num_turns", "Trajectories", "Name"}};
  for (const auto* run : {&c.agent, &c.refinement})
    rows.push_back({run == &c.agent ? "agent" : "refinement", run->info.id, to_string(run->info.status), run->info.origin,
                    run_policy(run->info), run->info.model, std::to_string(run->num_turns), std::to_string(run->trajectories.size()),
                    run->info.notes});
  return out + text_table(rows, 9);
}

std::string warnings_text(const AgentComparison& c) {
  std::string out = "\nWarnings\n";
  if (c.warnings.empty()) out += "  none: same budget, definitions, model, GPU, prompt tags and evaluation options\n";
  for (const auto& w : c.warnings) out += wrap("- " + w, "  ");
  return out;
}

// Table 3 under the paper's rule, with the token ratio and the notes of rows left short.
std::string table3_text(const AgentComparison& c) {
  std::string out = "\n" + wrap(fmt::format("Table 3. Agent vs refinement at N = {} evaluation requests per trajectory: median of "
                                            "per-trajectory best instruction-qualified speedups (no qualified turn = 0) [{} bootstrap "
                                            "interval], and the ratio of median cumulative tokens (agent / refinement){}",
                                            c.requests, confidence_text(c), title_tag(c)),
                                "");
  Rows rows = {{"Definition", "Traj A/R", "Agent", "k/n", "Refinement", "k/n", "Token ratio", "Agent tokens", "Refinement tokens"}};
  for (const auto& row : c.rows)
    rows.push_back({row.definition, fmt::format("{} / {}", row.agent.counted, row.refinement.counted),
                    rule_cell(row.agent, InstructionRule::paper),
                    qualified_cell(row.agent.rule(InstructionRule::paper), row.agent.counted),
                    rule_cell(row.refinement, InstructionRule::paper),
                    qualified_cell(row.refinement.rule(InstructionRule::paper), row.refinement.counted),
                    format_optional(row.ratio.total, 3), format_optional(row.agent.tokens.median_total, 0),
                    format_optional(row.refinement.tokens.median_total, 0)});
  out += text_table(rows, 1);
  out += wrap("Traj: counted trajectories. k/n: trajectories with a qualified timed turn. Tokens: median per trajectory of the "
              "cumulative prompt + completion tokens through request N, over all trajectories.",
              "  ");
  for (const auto& row : c.rows)
    if (auto notes = comparison_notes(row); !notes.empty()) out += wrap("Note, " + row.definition + ": " + notes, "  ");
  return out;
}

std::string other_rules_text(const AgentComparison& c) {
  std::string out = "\nThe same medians under the strict rule and unrestricted (any PASSED turn) [" + confidence_text(c) +
                    " bootstrap interval]\n";
  Rows rows = {{"Definition", "Agent strict", "Refinement strict", "Agent unrestricted", "Refinement unrestricted"}};
  for (const auto& row : c.rows)
    rows.push_back({row.definition, rule_cell(row.agent, InstructionRule::strict), rule_cell(row.refinement, InstructionRule::strict),
                    rule_cell(row.agent, InstructionRule::unrestricted), rule_cell(row.refinement, InstructionRule::unrestricted)});
  return out + text_table(rows, 1);
}

std::string token_ratio_text(const AgentComparison& c) {
  std::string out = "\nToken ratio by kind (median cumulative tokens through N, agent / refinement)\n";
  Rows rows = {{"Definition", "Prompt", "Completion", "Reasoning", "Cached", "Total"}};
  for (const auto& row : c.rows)
    rows.push_back({row.definition, format_optional(row.ratio.prompt, 3), format_optional(row.ratio.completion, 3),
                    format_optional(row.ratio.reasoning, 3), format_optional(row.ratio.cached, 3), format_optional(row.ratio.total, 3)});
  return out + text_table(rows, 1);
}

// One side's cell of a curve table at token budget x: the value with the band of its grid point.
std::string curve_cell(const TokenCurve& curve, const CurveSide& side, double at_zero, double x) {
  if (side.trajectories == 0) return "-";
  auto it = std::upper_bound(curve.tokens.begin(), curve.tokens.end(), x);
  std::string s = format_number(curve_value(curve, side, at_zero, x), 3);
  if (it != curve.tokens.begin()) {
    const auto& band = side.band[static_cast<std::size_t>(it - curve.tokens.begin() - 1)];
    s += " [" + format_number(band.lower, 3) + ", " + format_number(band.upper, 3) + "]";
  }
  return s;
}

std::string curve_text(const TokenCurve& curve) {
  std::string out = wrap(fmt::format("{} ({} agent, {} refinement counted trajectories; {} step points)", curve.definition,
                                     curve.agent.trajectories, curve.refinement.trajectories, curve.tokens.size()),
                         "  ");
  if (curve.tokens.empty())
    return out + wrap(fmt::format("no turn spent tokens: agent {}, refinement {} at every budget", format_number(curve.agent_at_zero, 3),
                                  format_number(curve.refinement_at_zero, 3)),
                      "    ");
  Rows rows = {{"Tokens <=", "Agent", "Refinement"}};
  for (double x : nice_ticks(curve.tokens.front(), curve.tokens.back()))
    rows.push_back({format_number(x, 0), curve_cell(curve, curve.agent, curve.agent_at_zero, x),
                    curve_cell(curve, curve.refinement, curve.refinement_at_zero, x)});
  return out + text_table(rows, 0);
}

std::string figure14_text(const AgentComparison& c) {
  std::string out = "\n" + wrap(fmt::format("Figure 14. Median best instruction-qualified speedup within a per-trajectory token budget "
                                            "[{} pointwise bootstrap band], at 1-2-5 token budgets (every step point: --json, --csv, "
                                            "--html){}",
                                            confidence_text(c), title_tag(c)),
                                "");
  for (const auto& curve : c.curves) out += curve_text(curve);
  return out;
}

}  // namespace

std::string render_agent_comparison_text(const AgentComparison& c) {
  std::string out = header_text(c) + runs_text(c) + warnings_text(c) + table3_text(c) + other_rules_text(c) + token_ratio_text(c) +
                    figure14_text(c);
  out += "\nDefinitions\n";
  for (const auto& d : agent_comparison_definitions(c)) out += wrap(d.name + ": " + d.text, "  ");
  return out;
}

}  // namespace ptxbench::report
