#include "report/report_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/sha256.h"
#include "embedded/report_assets.h"  // generated from src/report/assets/ (src/CMakeLists.txt)
#include "report/label_charts.h"
#include "report/report_format.h"

namespace ptxbench::report {
namespace {

using Labels = std::array<int64_t, kLabelCount>;

std::string e(std::string_view s) { return html_escape(s); }

std::string group_label(const Report& r, const Group& g) {
  const std::string variant = group_variant(g);
  return (r.runs.size() > 1 ? run_label(r, g.run_id) + " " : "") + g.model + " \u00b7 " + g.definition + " \u00b7 " +
         (variant.empty() ? "" : variant + " \u00b7 ") + g.gpu;
}

// The same without the model and GPU, which a Fast_p chart's title names: its legend entry.
std::string curve_label(const Report& r, const Group& g) {
  const std::string variant = group_variant(g);
  return (r.runs.size() > 1 ? run_label(r, g.run_id) + " \u00b7 " : "") + g.definition + (variant.empty() ? "" : " \u00b7 " + variant);
}

// The columns that name a group (Run when several, Language when several, Model, Definition, Tag
// with --by tag, GPU).
std::string key_header_cells(const Report& r) {
  std::string s = r.runs.size() > 1 ? "<th>Run</th>" : "";
  if (r.several_languages()) s += "<th>Language</th>";
  s += "<th>Model</th><th>Definition</th>";
  if (has_experiments(r)) s += "<th>Experiment</th>";
  if (r.by == GroupBy::tag) s += "<th>Tag</th>";
  return s + "<th>GPU</th>";
}

std::string key_cells(const Report& r, const Group& g) {
  std::string s = r.runs.size() > 1 ? "<td>" + e(run_label(r, g.run_id)) + "</td>" : "";
  if (r.several_languages()) s += "<td>" + e(g.language) + "</td>";
  s += "<td>" + e(g.model) + "</td><td>" + e(g.definition) + "</td>";
  if (has_experiments(r)) s += "<td>" + e(g.experiment.empty() ? "-" : g.experiment) + "</td>";
  if (r.by == GroupBy::tag) s += "<td>" + e(g.tag) + "</td>";
  return s + "<td>" + e(g.gpu) + "</td>";
}

std::string base64(const std::string& bytes) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8) | uint8_t(bytes[i + 2]);
    out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], k[v & 63]};
  }
  if (i + 1 == bytes.size()) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    out += {k[v >> 18], k[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    uint32_t v = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8);
    out += {k[v >> 18], k[(v >> 12) & 63], k[(v >> 6) & 63], '='};
  }
  return out;
}

// The page's style and its script, which draws the Fast_p curves from the embedded data
// (src/report/assets/report.{css,js}, embedded at build time).
constexpr std::string_view kStyle = embedded::report_assets::report_css;
constexpr std::string_view kScript = embedded::report_assets::report_js;

std::string pre(const std::string& text, bool wrap = false) {
  return std::string("<pre") + (wrap ? " class=\"wrap\"" : "") + "><code>" + e(text) + "</code></pre>";
}

// One budget table: a row per group, a column per budget T; each cell the paper rule's value over
// the unrestricted one, then the strict rule's, each with its interval where the table has one.
std::string budget_table_html(const Report& r, const BudgetTable& table, bool pooled_rows) {
  // The paper's tables show twice: without the '(all)' rows first, with them under "Other metrics".
  const std::string id = "table-" + table.key + (pooled_rows && !table.paper_number.empty() ? "-with-all" : "");
  std::string s = "<div class=\"scroll\"><table class=\"metric\" id=\"" + e(id) + "\" data-metric=\"" + e(table.key) + "\"><tr>";
  s += key_header_cells(r) + "<th class=\"num\">Traj</th>";
  for (int b : r.budgets) s += "<th>T = " + std::to_string(b) + "</th>";
  s += "</tr>";
  for (const auto& g : r.groups) {
    if (g.pooled && !pooled_rows) continue;
    s += "<tr>" + key_cells(r, g) + "<td class=\"num\">" + std::to_string(g.metrics.counted) + "</td>";
    for (std::size_t i = 0; i < g.metrics.budgets.size(); ++i)
      s += "<td class=\"cell\"><span class=\"inst\">" + e(budget_value(g, i, table, InstructionRule::paper)) + "</span><br><span class=\"unres\">(" +
           e(budget_value(g, i, table, InstructionRule::unrestricted)) + ")</span><br><span class=\"strict\">strict: " +
           e(budget_value(g, i, table, InstructionRule::strict)) + "</span></td>";
    s += "</tr>";
  }
  return s + "</table></div><p class=\"note\">" + e(table.note) + ".</p>";
}

// pass@k: a column per k, each cell the values at every budget under each rule.
std::string pass_table_html(const Report& r) {
  std::string s = "<div class=\"scroll\"><table class=\"metric\" id=\"pass-at-k\"><tr>" + key_header_cells(r) + "<th class=\"num\">Traj</th>";
  for (int k : r.pass_k) s += "<th>pass@" + std::to_string(k) + " (%), T = " + e(budgets_text(r.budgets)) + "</th>";
  s += "</tr>";
  for (const auto& g : r.groups) {
    s += "<tr>" + key_cells(r, g) + "<td class=\"num\">" + std::to_string(g.metrics.counted) + "</td>";
    for (int k : r.pass_k)
      s += "<td class=\"cell\"><span class=\"inst\">" + e(pass_values(g.metrics, k, InstructionRule::paper)) + "</span><br><span class=\"unres\">(" +
           e(pass_values(g.metrics, k, InstructionRule::unrestricted)) + ")</span><br><span class=\"strict\">strict: " +
           e(pass_values(g.metrics, k, InstructionRule::strict)) + "</span></td>";
    s += "</tr>";
  }
  return s + "</table></div><p class=\"note\">" + e(definition_text("pass_at_k")) + "</p>";
}

// CUDA-PTX beside Triton: Fast_1 and Fast_0 of every language's pooled rows.
std::string language_table_html(const Report& r) {
  std::string s = "<div class=\"scroll\"><table class=\"metric\" id=\"languages-table\"><tr><th>Language</th><th>Model</th><th>Definition</th><th>GPU</th>"
                  "<th class=\"num\">Traj</th>";
  for (const auto* table : language_tables()) s += "<th>" + e(table->title) + " (" + e(table->unit) + ")</th>";
  s += "</tr>";
  for (const auto& g : r.language_groups) {
    s += "<tr><td>" + e(g.language) + "</td><td>" + e(g.model) + "</td><td>" + e(g.definition) + "</td><td>" + e(g.gpu) +
         "</td><td class=\"num\">" + std::to_string(g.metrics.counted) + "</td>";
    for (const auto* table : language_tables())
      s += "<td class=\"cell\"><span class=\"inst\">" + e(budget_values(g.metrics, *table, InstructionRule::paper)) +
           "</span><br><span class=\"unres\">(" + e(budget_values(g.metrics, *table, InstructionRule::unrestricted)) + ")</span></td>";
    s += "</tr>";
  }
  return s + "</table></div><p class=\"note\">" + e(language_note()) + "</p>";
}

// A correct turn's strict verdict: "yes (97%)", "no (12%)" or "unknown" (no strict verdict stored).
std::string strict_text(const TurnRecord& rec) {
  if (!rec.verdict || !rec.verdict->tensor_core_coverage) return "unknown";
  return std::string(rec.verdict->target_instruction_strict ? "yes" : "no") + " (" +
         format_number(100.0 * *rec.verdict->tensor_core_coverage, 0) + "%)";
}

std::string turn_html(const TrajectoryDetail& t, std::size_t k, std::map<std::string, int64_t>& seen) {
  const TurnRecord& rec = t.records[k];
  std::string status = rec.status.empty() ? "(" + to_string(rec.step) + ")" : rec.status;
  std::string s = "<details class=\"turn\"><summary>Turn " + std::to_string(rec.turn) + " \u2014 <span class=\"st-" + e(rec.status) +
                  "\">" + e(status) + "</span>";
  if (t.judged[k]) s += " \u2014 " + e(label_name(t.labels[k]));
  if (rec.speedup) s += " \u2014 " + format_number(*rec.speedup, 3) + "x";
  if (rec.correct) s += rec.target_instruction ? " \u2014 target instructions: yes" : " \u2014 target instructions: no";
  if (rec.correct) s += " \u2014 strict: " + strict_text(rec);
  if (rec.verdict && from_fake_backend(*rec.verdict)) s += " \u2014 <span class=\"bad\">fake backend</span>";
  s += "</summary>";
  if (rec.verdict) {
    const Verdict& v = *rec.verdict;
    s += "<p><b>Verdict</b>: " + e(to_string(v.status)) + (v.message.empty() ? "" : " \u2014 " + e(v.message));
    if (auto g = verdict_gpu(v); !g.empty()) s += " <span class=\"small\">(" + e(g) + ")</span>";
    s += "</p>";
  }
  if (rec.usage)
    s += fmt::format("<p class=\"small\">tokens: prompt {}, completion {}, reasoning {}, cached {}; model latency {:.1f} s, {} attempt(s); "
                     "finish {}</p>",
                     rec.usage->prompt_tokens, rec.usage->completion_tokens, rec.usage->reasoning_tokens, rec.usage->cached_tokens,
                     rec.usage->latency_s, rec.usage->attempts, e(rec.usage->finish_reason));
  if (rec.candidate_source) {
    std::string sha = rec.candidate_sha256.value_or("");
    if (auto it = seen.find(sha); !sha.empty() && it != seen.end()) {
      s += "<p><b>Candidate</b>: the same source as turn " + std::to_string(it->second) + " (sha256 " + e(sha.substr(0, 12)) + ")</p>";
    } else {
      if (!sha.empty()) seen[sha] = rec.turn;
      s += "<p><b>Candidate</b> <span class=\"small\">sha256 " + e(sha.substr(0, 12)) + "</span></p>" + pre(*rec.candidate_source);
    }
  }
  if (rec.extraction_error) s += "<p><b>Extraction error</b></p>" + pre(*rec.extraction_error, true);
  if (!rec.candidate_source && rec.answer) s += "<p><b>Model answer</b></p>" + pre(*rec.answer, true);
  if (rec.feedback) s += "<p><b>Feedback</b> (the next turn's user message)</p>" + pre(*rec.feedback, true);
  if (rec.verdict)
    s += "<details><summary>Verdict JSON</summary>" +
         pre(rec.verdict->to_json().dump(2, ' ', false, ordered_json::error_handler_t::replace)) +
         "</details>";
  return s + "</details>";
}

std::string trajectory_html(const Report& r, const TrajectoryDetail& t) {
  std::string best = t.info.best_speedup ? format_number(*t.info.best_speedup, 3) + "x" : "-";
  std::string best_t = t.info.best_target_speedup ? format_number(*t.info.best_target_speedup, 3) + "x" : "-";
  std::string s = fmt::format("<details class=\"traj\" data-trajectory=\"{}\"><summary>{} {} \u00b7 {} \u00b7 {} \u2014 {}{} \u2014 best {} "
                              "(target-instruction {}) \u2014 {} turns, {} tokens</summary>",
                              t.info.id, e(run_label(r, t.info.run_id)), e(t.model), e(trajectory_name(t)), e(t.gpu),
                              e(to_string(t.info.status)), t.info.stop_reason.empty() ? "" : " (" + e(t.info.stop_reason) + ")", best,
                              best_t, t.records.size(), t.obs.tokens.total());
  if (!counted(t.obs)) s += "<p class=\"bad\">Not counted: no judged turn other than INFRA_ERROR.</p>";
  if (t.obs.incomplete)
    s += std::string("<p class=\"bad\">Incomplete: ") +
         (r.missing == MissingTurns::carry_forward ? "its last verdict is carried forward." : "its missing turns count as not correct.") +
         "</p>";
  s += "<div class=\"scroll\"><table class=\"turns\"><tr><th>Turn</th><th>Status</th><th>Label</th><th>Correct</th><th>Target instr.</th><th>Strict (coverage)</th><th class=\"num\">Speedup</th>"
       "<th class=\"num\">Prompt</th><th class=\"num\">Completion</th><th class=\"num\">Reasoning</th><th class=\"num\">Cached</th></tr>";
  for (std::size_t k = 0; k < t.records.size(); ++k) {
    const auto& rec = t.records[k];
    const TokenCounts tokens = tokens_of(rec);
    s += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
                     "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                     rec.turn, e(rec.status.empty() ? "(" + to_string(rec.step) + ")" : rec.status),
                     t.judged[k] ? e(label_name(t.labels[k])) : "", rec.correct ? "yes" : "no",
                     rec.correct && rec.target_instruction ? "yes" : "no", rec.correct ? strict_text(rec) : "-",
                     rec.speedup ? format_number(*rec.speedup, 3) : "-", tokens.prompt, tokens.completion, tokens.reasoning,
                     tokens.cached);
  }
  s += "</table></div>";
  std::map<std::string, int64_t> seen;
  for (std::size_t k = 0; k < t.records.size(); ++k) s += turn_html(t, k, seen);
  return s + "</details>";
}

// A section heading; in a report with fake-backend verdicts it says so.
std::string h2(const Report& r, const std::string& id, const std::string& text) {
  std::string tag = r.provenance.fake() ? std::string("<span class=\"bad fake-tag\">") + kFakeTag + "</span>" : "";
  return "<h2 id=\"" + e(id) + "\">" + e(text) + tag + "</h2>";
}

// Per group: verdicts, fake-backend verdicts, evaluation options off their defaults.
std::string provenance_html(const Report& r) {
  std::string s = h2(r, "provenance", "Provenance") + "<p class=\"note\">" + e(definition_text("fake_backend")) + " " +
                  e(definition_text("evaluation_options")) + "</p>";
  if (!r.provenance.fake() && !r.provenance.options_changed() && !r.provenance.imported())
    return s + fmt::format("<p>Every one of the {} verdicts comes from a GPU evaluation here with the evaluator's default options.</p>\n",
                           r.provenance.verdicts);
  s += "<div class=\"scroll\"><table id=\"provenance-table\"><tr>";
  s += key_header_cells(r) + "<th class=\"num\">Verdicts</th><th class=\"num\">Fake backend</th>"
       "<th>Evaluation options off their defaults</th><th class=\"num\">Imported trajectories</th></tr>";
  for (const auto& g : r.groups) {
    s += "<tr>";
    s += key_cells(r, g) + "<td class=\"num\">" + std::to_string(g.provenance.verdicts) + "</td><td class=\"num" + (g.provenance.fake() ? " bad" : "") + "\">" +
         std::to_string(g.provenance.fake_verdicts) + "</td><td>" + e(describe_changes(g.provenance)) + "</td><td class=\"num" +
         (g.provenance.imported() ? " bad" : "") + "\">" + std::to_string(g.provenance.imported_trajectories) + "</td></tr>";
  }
  return s + "</table></div>\n";
}

ordered_json chart_data(const Report& r) {
  ordered_json groups = ordered_json::array();
  for (const auto& g : r.groups) {
    ordered_json budgets = ordered_json::array();
    for (std::size_t i = 0; i < g.metrics.budgets.size(); ++i) {
      const auto& m = g.metrics.budgets[i];
      ordered_json b = {{"T", m.budget}, {"measured", m.measured}, {"n", m.trajectories}, {"strict_known", !m.strict_unknown_only()}};
      const std::pair<const char*, InstructionRule> curves[] = {
          {"best", InstructionRule::unrestricted}, {"best_target", InstructionRule::paper}, {"best_strict", InstructionRule::strict}};
      for (const auto& [key, rule] : curves) {
        ordered_json present = ordered_json::array();
        for (const auto& x : m.bests(rule))
          if (x) present.push_back(*x);
        b[key] = present;
      }
      // Fast^Inst_p's intervals on the report's grid (intervals.h).
      ordered_json grid = ordered_json::array(), lower = ordered_json::array(), upper = ordered_json::array();
      for (double p : fast_p_grid()) {
        auto iv = i < g.intervals.size() ? g.intervals[i].fast_of(InstructionRule::paper, p) : std::nullopt;
        grid.push_back(p);
        lower.push_back(iv ? ordered_json(iv->lower) : ordered_json(nullptr));
        upper.push_back(iv ? ordered_json(iv->upper) : ordered_json(nullptr));
      }
      b["grid"] = grid;
      b["lower"] = lower;
      b["upper"] = upper;
      budgets.push_back(b);
    }
    groups.push_back({{"label", curve_label(r, g)}, {"model", g.model}, {"gpu", g.gpu}, {"definition", g.definition}, {"budgets", budgets}});
  }
  return {{"budgets", r.budgets}, {"confidence_percent", 100.0 * r.bootstrap.confidence}, {"groups", groups}};
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string json_for_script(const ordered_json& j) {
  std::string text = j.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default: out += c;
    }
  }
  return out;
}

std::string csp_hash(std::string_view script) {
  std::string hex = sha256_hex(script), bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return "sha256-" + base64(bytes);
}

namespace {

// The head (the CSP allows only the page's own script), the banner of fake verdicts, the summary
// line and the navigation.
std::string page_head_html(const Report& r) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  s += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src '" +
       csp_hash(kScript) + "'\">\n";
  s += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>ptxbench report</title>\n<style>";
  s += kStyle;
  s += "</style></head><body>\n<h1>ptxbench report</h1>\n";
  if (auto mark = fake_mark(r); !mark.empty()) s += "<p class=\"bad fake-banner\" id=\"fake-backend\">" + e(mark) + "</p>\n";
  s += "<p class=\"small\">Store " + e(r.store) + " \u00b7 generated " + e(r.generated_at) + " \u00b7 turn budgets T = " +
       e(budgets_text(r.budgets)) + (r.filters.any() ? " \u00b7 filtered: " + e(r.filters.describe()) : std::string()) + " \u00b7 " +
       e(protocol_note(r)) + " Opens offline: everything is inline.</p>\n";
  std::string nav = "<nav><a href=\"#fastp\">Fast_p</a>";
  for (const auto* table : paper_tables()) nav += "<a href=\"#" + e(table->key) + "\">" + e(table->paper_number) + "</a>";
  return s + nav + "<a href=\"#tables\">Other metrics</a><a href=\"#languages\">Languages</a><a href=\"#runs\">Runs</a><a "
                   "href=\"#provenance\">Provenance</a><a href=\"#labels\">Turn labels &amp; transitions</a><a href=\"#tokens\">Tokens</a><a "
                   "href=\"#trajectories\">Trajectories</a><a href=\"#definitions\">Definitions</a></nav>\n";
}

// Figures first: the Fast_p curves, one chart per model x GPU, drawn by the page's script.
std::string fastp_section_html(const Report& r) {
  return h2(r, "fastp", "Fast_p curves") +
         "<div id=\"fastp-controls\"></div><div id=\"fastp-charts\" class=\"charts\"></div>"
         "<p id=\"fastp-ready\" class=\"small\"></p><p id=\"layout-check\" hidden></p>"
         "<p class=\"note\">Solid: Fast^Inst_p (instruction-qualified best, the paper's rule), with its " +
         e(format_number(100.0 * r.bootstrap.confidence, 0)) +
         "% bootstrap interval at p = 0, 0.25, ..., 3; dashed: Fast_p; dotted: Fast^Inst_p under the strict rule (where known). The "
         "dotted vertical line is p = 1 (the baseline). " + e(definition_text("fast_p")) + "</p>"
         "<noscript><p class=\"bad\">The curves are drawn by the page's inline script; the tables below hold the same data at p = 0 and 1, "
         "and the JSON report lists Fast_p over a grid of p.</p></noscript>\n";
}

const char* const kCellNote = "Each cell: <span class=\"inst\">the paper's rule (target instructions executed)</span> over <span "
                              "class=\"unres\">(any correct turn)</span>, then the strict rule; [lo, hi]: the bootstrap interval. n/a: "
                              "not measured (T above the run's num_turns) or unknown; -: none. Traj: counted trajectories.";

// The paper's tables without the '(all)' rows, then the notes of runs and groups.
std::string paper_tables_html(const Report& r) {
  std::string s;
  for (const auto* table : paper_tables())
    s += h2(r, table->key, table_heading(*table) + " (" + table->unit + ")") + "<p class=\"note\">" + e(capitalized(describe(r.missing))) + ". " +
         kCellNote + "</p>" + budget_table_html(r, *table, false);
  std::string notes;
  for (const auto& run : r.runs)
    if (!run.no_pooled_row.empty()) notes += "<li>" + e(run_label(r, run.info.id) + " " + run.info.model) + ": " + e(run.no_pooled_row) + "</li>";
  for (const auto& g : r.groups)
    if (auto n = group_notes(g); !n.empty()) notes += "<li>" + e(group_label(r, g)) + ": " + e(n) + "</li>";
  if (!notes.empty()) s += "<p><b>Notes</b></p><ul>" + notes + "</ul>";
  return s;
}

// Our tables, the paper's with the '(all)' rows, pass@k and Fast_p by language.
std::string other_metrics_html(const Report& r) {
  std::string s = h2(r, "tables", "Other metrics at T = " + budgets_text(r.budgets)) + "<p class=\"note\">" +
                  e(capitalized(describe(r.missing))) + ". " + kCellNote +
                  " The '(all)' rows pool a run's definitions. The <a href=\"#definitions\">definitions</a> say exactly what is "
                  "counted.</p>\n";
  for (const auto& table : budget_tables())
    if (table.paper_number.empty()) s += "<h3>" + e(table.title) + " (" + e(table.unit) + ")</h3>" + budget_table_html(r, table, true);
  s += "<h3>Tables 1 and 9 with the '(all)' rows</h3>";
  for (const auto* table : paper_tables()) s += budget_table_html(r, *table, true);
  s += "<h3 id=\"pass\">pass@k</h3>" + pass_table_html(r);
  s += "<p class=\"note strict\">" + e(strict_note()) + "</p>";
  return s + "\n" + h2(r, "languages", "Fast_p by language at T = " + budgets_text(r.budgets)) + language_table_html(r);
}

std::string runs_section_html(const Report& r) {
  std::string s = h2(r, "runs", "Runs") + "<div class=\"scroll\"><table><tr><th></th><th>Run</th><th>Status</th><th>Origin</th><th>Language</th><th>Model</th><th class=\"num\">num_turns</th><th "
                  "class=\"num\">Trajectories</th><th>Condition</th><th>Name</th></tr>";
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const auto& run = r.runs[i];
    s += fmt::format("<tr><td>R{}</td><td>{}</td><td>{}</td><td{}>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                     i + 1, e(run.info.id), e(to_string(run.info.status)), run.info.imported() ? " class=\"bad\"" : "",
                     e(run.info.origin), e(run.language), e(run.info.model), run.num_turns, run.trajectories.size(), e(run.condition), e(run.info.notes));
  }
  return s + "</table></div>\n";
}

// Label counts per group, then per group a card with its label bars and transition heatmap.
std::string labels_section_html(const Report& r) {
  std::string s = h2(r, "labels", "Turn labels and error-state transitions") + "<p class=\"note\">Counts over judged turns actually run (no "
                  "carry-forward). Bars: labels per turn index; matrix: label at turn n (row) to label at turn n+1 (column).</p>";
  s += "<div class=\"legend\">";
  for (auto l : kAllLabels)
    s += fmt::format("<span><span class=\"swatch\" style=\"background:{}\"></span>{}</span>", label_color(l), e(label_name(l)));
  s += "</div><div class=\"scroll\"><table><tr>";
  s += key_header_cells(r);
  for (auto l : kAllLabels) s += "<th class=\"num\">" + e(label_name(l)) + "</th>";
  s += "</tr>";
  for (const auto& g : r.groups) {
    s += "<tr>";
    s += key_cells(r, g);
    for (auto l : kAllLabels) s += "<td class=\"num\">" + std::to_string(g.metrics.labels.total[static_cast<std::size_t>(label_index(l))]) + "</td>";
    s += "</tr>";
  }
  s += "</table></div><div class=\"cards\">";
  for (const auto& g : r.groups)
    s += "<div class=\"card\"><h3>" + e(group_label(r, g)) + "</h3>" + label_bars_svg(g.metrics.labels) + "<br>" +
         transition_svg(g.metrics.transitions) + "</div>";
  return s + "</div>\n";
}

// "median / mean (sum)" of one token kind.
std::string token_cell_html(const std::optional<double>& median, const std::optional<double>& mean, int64_t total) {
  return "<td class=\"num\">" + format_optional(median, 0) + " <span class=\"small\">/ " + format_optional(mean, 0) + " (" +
         std::to_string(total) + ")</span></td>";
}

std::string tokens_table_html(const Report& r) {
  std::string s = h2(r, "tokens", "Tokens per trajectory") + "<p class=\"note\">" + e(definition_text("tokens")) + "</p><div class=\"scroll\"><table><tr>";
  s += key_header_cells(r) + "<th class=\"num\">Trajectories</th><th class=\"num\">Prompt</th><th "
       "class=\"num\">Completion</th><th class=\"num\">Reasoning</th><th class=\"num\">Cached</th><th class=\"num\">Total</th></tr>";
  for (const auto& g : r.groups) {
    const auto& t = g.metrics.tokens;
    s += "<tr>" + key_cells(r, g) + "<td class=\"num\">" + std::to_string(t.trajectories) + "</td>" +
         token_cell_html(t.median_prompt, t.mean_prompt, t.total.prompt) +
         token_cell_html(t.median_completion, t.mean_completion, t.total.completion) +
         token_cell_html(t.median_reasoning, t.mean_reasoning, t.total.reasoning) +
         token_cell_html(t.median_cached, t.mean_cached, t.total.cached) + token_cell_html(t.median_total, t.mean_total, t.total.total()) +
         "</tr>";
  }
  return s + "</table></div><p class=\"small\">Median per trajectory / mean (sum in parentheses).</p>";
}

std::string reasoning_table_html(const Report& r) {
  std::string s = "<h3 id=\"reasoning\">Reasoning tokens by turn</h3><p class=\"note\">" + e(definition_text("reasoning_by_turn")) +
                  "</p><div class=\"scroll\"><table id=\"reasoning-table\"><tr>" + key_header_cells(r) + "<th class=\"num\">Turn</th><th class=\"num\">Calls</th><th "
                  "class=\"num\">Median</th><th class=\"num\">Mean</th><th class=\"num\">Min</th><th class=\"num\">Max</th></tr>";
  for (const auto& g : r.groups)
    for (const auto& x : g.metrics.reasoning)
      s += "<tr>" + key_cells(r, g) + fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.0f}</td><td "
                                                  "class=\"num\">{:.0f}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                                                  x.turn, x.calls, x.median, x.mean, x.min, x.max);
  return s + "</table></div>";
}

std::string token_ratio_table_html(const Report& r) {
  if (r.comparisons.empty()) return "";
  std::string s = "<h3 id=\"comparisons\">Token ratio between runs</h3><p class=\"note\">" + e(definition_text("token_ratio")) +
                  "</p><div class=\"scroll\"><table><tr><th>First run</th><th>Other run</th><th>Definition</th><th class=\"num\">Prompt</th><th class=\"num\">Completion</th><th "
                  "class=\"num\">Reasoning</th><th class=\"num\">Cached</th><th class=\"num\">Total</th></tr>";
  for (const auto& c : r.comparisons)
    s += "<tr><td>" + e(run_label(r, c.reference_run)) + "</td><td>" + e(run_label(r, c.run)) + "</td><td>" + e(c.definition) +
         "</td><td class=\"num\">" + format_optional(c.ratio.prompt, 3) + "</td><td class=\"num\">" + format_optional(c.ratio.completion, 3) +
         "</td><td class=\"num\">" + format_optional(c.ratio.reasoning, 3) + "</td><td class=\"num\">" + format_optional(c.ratio.cached, 3) +
         "</td><td class=\"num\">" + format_optional(c.ratio.total, 3) + "</td></tr>";
  return s + "</table></div>";
}

// The drill-down: every trajectory of every group but the '(all)' rows.
std::string trajectories_section_html(const Report& r) {
  std::string s = "\n" + h2(r, "trajectories", "Trajectories") + "<p class=\"note\">Every stored turn: verdict, speedup, tokens, the candidate "
                  "source, the model's answer when no candidate was extracted, and the feedback the model was given.</p><div id=\"drill-controls\"></div>";
  for (const auto& g : r.groups) {
    if (g.pooled) continue;
    s += "<h3>" + e(group_label(r, g)) + "</h3>";
    for (auto i : g.members) s += trajectory_html(r, r.trajectories[i]);
  }
  return s;
}

std::string definitions_section_html() {
  std::string s = "\n<h2 id=\"definitions\">Definitions</h2><dl>";
  for (const auto& d : metric_definitions()) s += "<dt id=\"def-" + e(d.key) + "\">" + e(d.name) + "</dt><dd>" + e(d.text) + "</dd>";
  s += "</dl><h3>Status \u2192 turn label</h3><table><tr><th>Status</th><th>Label</th><th>Why</th></tr>";
  for (const auto& m : label_mapping()) s += "<tr><td>" + e(m.status) + "</td><td>" + e(m.label) + "</td><td>" + e(m.note) + "</td></tr>";
  return s + "</table>\n";
}

}  // namespace

std::string render_html(const Report& r) {
  std::string s = page_head_html(r) + fastp_section_html(r) + paper_tables_html(r) + other_metrics_html(r) + runs_section_html(r) +
                  provenance_html(r) + labels_section_html(r) + tokens_table_html(r) + reasoning_table_html(r) +
                  token_ratio_table_html(r) + trajectories_section_html(r) + definitions_section_html();
  s += "<script type=\"application/json\" id=\"report-data\">" + json_for_script(chart_data(r)) + "</script>\n";
  s += "<script>";
  s += kScript;
  s += "</script>\n</body></html>\n";
  return s;
}

}  // namespace ptxbench::report
