#include "report/agent_comparison_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "embedded/report_assets.h"  // generated from src/report/assets/ (src/CMakeLists.txt)
#include "report/report_format.h"
#include "report/report_html.h"

namespace ptxbench::report {
namespace {

constexpr const char* kAgentColor = "#d62728";
constexpr const char* kRefinementColor = "#1f77b4";

std::string e(std::string_view s) { return html_escape(s); }

// src/report/assets/agent_comparison.css, embedded at build time.
constexpr std::string_view kStyle = embedded::report_assets::agent_comparison_css;

std::string side_name(bool agent) { return agent ? "agent" : "refinement"; }

std::string median_cell(const ComparisonSide& s, InstructionRule rule) {
  const auto& b = s.rule(rule);
  if (!b.median) return "<td class=\"num\">-</td>";
  std::string star = rule == InstructionRule::strict && s.strict_unknown_turns > 0 ? "*" : "";
  std::string band = b.band ? fmt::format(" <span class=\"band\">[{}, {}]</span>", format_number(b.band->lower, 3),
                                          format_number(b.band->upper, 3))
                            : "";
  return "<td class=\"num\">" + format_number(*b.median, 3) + star + band + "</td>";
}

std::string runs_table(const AgentComparison& c) {
  std::string s = "<table id=\"agent-runs\"><tr><th></th><th>Run</th><th>Status</th><th>Origin</th><th>Policy</th><th>Model</th>"
                  "<th class=\"num\">num_turns</th><th class=\"num\">Trajectories</th><th>Definitions</th><th>GPU</th><th>Name</th></tr>";
  for (const auto* run : {&c.agent, &c.refinement}) {
    std::string defs, gpus;
    for (const auto& d : run->definitions) defs += (defs.empty() ? "" : ", ") + d;
    for (const auto& g : run->gpus) gpus += (gpus.empty() ? "" : ", ") + g;
    s += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td "
                     "class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                     side_name(run == &c.agent), e(run->info.id), e(to_string(run->info.status)), e(run->info.origin), e(run_policy(run->info)),
                     e(run->info.model), run->num_turns, run->trajectories.size(), e(defs), e(gpus), e(run->info.notes));
  }
  return s + "</table>\n";
}

std::string main_table(const AgentComparison& c) {
  std::string s = "<table id=\"agent-table3\"><tr><th>Definition</th><th class=\"num\">Traj A / R</th>"
                  "<th class=\"num\">Agent: median best</th><th class=\"num\">k/n</th><th class=\"num\">Refinement: median best</th>"
                  "<th class=\"num\">k/n</th><th class=\"num\">Token ratio A/R</th><th class=\"num\">Agent tokens</th>"
                  "<th class=\"num\">Refinement tokens</th></tr>";
  for (const auto& r : c.rows) {
    const auto& pa = r.agent.rule(InstructionRule::paper);
    const auto& pr = r.refinement.rule(InstructionRule::paper);
    s += fmt::format("<tr data-definition=\"{}\"><td>{}</td><td class=\"num\">{} / {}</td>{}<td class=\"num\">{}/{}</td>{}<td "
                     "class=\"num\">{}/{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                     e(r.definition), e(r.definition), r.agent.counted, r.refinement.counted, median_cell(r.agent, InstructionRule::paper),
                     pa.with_qualified, r.agent.counted, median_cell(r.refinement, InstructionRule::paper), pr.with_qualified,
                     r.refinement.counted, format_optional(r.ratio.total, 3), format_optional(r.agent.tokens.median_total, 0),
                     format_optional(r.refinement.tokens.median_total, 0));
  }
  return s + "</table>\n";
}

std::string rules_table(const AgentComparison& c) {
  std::string s = "<table id=\"agent-rules\"><tr><th>Definition</th><th class=\"num\">Agent strict</th><th class=\"num\">Refinement "
                  "strict</th><th class=\"num\">Agent unrestricted</th><th class=\"num\">Refinement unrestricted</th></tr>";
  for (const auto& r : c.rows)
    s += "<tr><td>" + e(r.definition) + "</td>" + median_cell(r.agent, InstructionRule::strict) +
         median_cell(r.refinement, InstructionRule::strict) + median_cell(r.agent, InstructionRule::unrestricted) +
         median_cell(r.refinement, InstructionRule::unrestricted) + "</tr>";
  return s + "</table>\n";
}

std::string tokens_table(const AgentComparison& c) {
  std::string s = "<table id=\"agent-tokens\"><tr><th>Definition</th><th>Run</th><th class=\"num\">Prompt</th><th "
                  "class=\"num\">Completion</th><th class=\"num\">Reasoning</th><th class=\"num\">Cached</th><th class=\"num\">Total</th></tr>";
  auto medians = [](const TokenSummary& t) {
    return "<td class=\"num\">" + format_optional(t.median_prompt, 0) + "</td><td class=\"num\">" + format_optional(t.median_completion, 0) +
           "</td><td class=\"num\">" + format_optional(t.median_reasoning, 0) + "</td><td class=\"num\">" +
           format_optional(t.median_cached, 0) + "</td><td class=\"num\">" + format_optional(t.median_total, 0) + "</td>";
  };
  for (const auto& r : c.rows) {
    s += "<tr><td rowspan=\"3\">" + e(r.definition) + "</td><td>agent</td>" + medians(r.agent.tokens) + "</tr>";
    s += "<tr><td>refinement</td>" + medians(r.refinement.tokens) + "</tr>";
    s += "<tr><td>ratio A/R</td><td class=\"num\">" + format_optional(r.ratio.prompt, 3) + "</td><td class=\"num\">" +
         format_optional(r.ratio.completion, 3) + "</td><td class=\"num\">" + format_optional(r.ratio.reasoning, 3) +
         "</td><td class=\"num\">" + format_optional(r.ratio.cached, 3) + "</td><td class=\"num\">" + format_optional(r.ratio.total, 3) +
         "</td></tr>";
  }
  return s + "</table>\n";
}

std::string token_label(double x) {
  if (x >= 1e6) return format_number(x / 1e6, x >= 1e7 || std::fmod(x, 1e6) == 0 ? 0 : 1) + "M";
  if (x >= 1e3) return format_number(x / 1e3, x >= 1e4 || std::fmod(x, 1e3) == 0 ? 0 : 1) + "k";
  return format_number(x, 0);
}

std::string points_table(const TokenCurve& curve) {
  std::string s = "<table class=\"curve-points\"><tr><th class=\"num\">Tokens &le;</th><th class=\"num\">Agent</th><th "
                  "class=\"num\">Agent band</th><th class=\"num\">Refinement</th><th class=\"num\">Refinement band</th></tr>";
  auto cells = [](const CurveSide& side, std::size_t g) {
    if (side.median.empty()) return std::string("<td class=\"num\">-</td><td class=\"num\">-</td>");
    return "<td class=\"num\">" + format_number(side.median[g], 3) + "</td><td class=\"num\">[" + format_number(side.band[g].lower, 3) +
           ", " + format_number(side.band[g].upper, 3) + "]</td>";
  };
  for (std::size_t g = 0; g < curve.tokens.size(); ++g)
    s += "<tr><td class=\"num\">" + format_number(curve.tokens[g], 0) + "</td>" + cells(curve.agent, g) + cells(curve.refinement, g) +
         "</tr>";
  return s + "</table>";
}

}  // namespace

std::string token_curve_svg(const TokenCurve& curve, const std::string& title) {
  const double W = 560, H = 340, L = 56, R = 16, T = 30, B = 48;
  std::string s = fmt::format(R"X(<svg class="token-curve" data-definition="{}" width="{}" height="{}" viewBox="0 0 {} {}" role="img">)X",
                              e(curve.definition), W, H, W, H);
  s += fmt::format(R"X(<text x="{}" y="18" font-size="13" font-weight="600">{}</text>)X", L, e(title));
  if (curve.tokens.empty()) {
    s += fmt::format(R"X(<text x="{}" y="{}" font-size="12">No turn spent tokens: agent {}, refinement {} at every budget.</text></svg>)X",
                     L, H / 2, format_number(curve.agent_at_zero, 3), format_number(curve.refinement_at_zero, 3));
    return s;
  }
  // x: whole decades around the grid, log scale; y: from 0 to above every band and the baseline 1.
  double lo = std::pow(10.0, std::floor(std::log10(curve.tokens.front())));
  double hi = std::pow(10.0, std::ceil(std::log10(curve.tokens.back())));
  if (hi <= curve.tokens.back()) hi *= 10;  // the last step needs room to show its level
  if (hi <= lo) hi = lo * 10;
  double top = std::max({1.0, curve.agent_at_zero, curve.refinement_at_zero});
  for (const auto* side : {&curve.agent, &curve.refinement})
    for (std::size_t g = 0; g < side->median.size(); ++g) top = std::max({top, side->median[g], side->band[g].upper});
  double ystep = top <= 1.5 ? 0.25 : top <= 3 ? 0.5 : top <= 6 ? 1.0 : std::ceil(top / 6);
  top = std::ceil(top * 1.05 / ystep) * ystep;
  auto sx = [&](double x) { return L + (W - L - R) * (std::log10(x) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)); };
  auto sy = [&](double y) { return T + (H - T - B) * (1.0 - y / top); };

  for (double decade = lo; decade <= hi * 1.0001; decade *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      double x = decade * m;
      if (x > hi * 1.0001) break;
      s += fmt::format(R"X(<line x1="{:.2f}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="{}"/>)X", sx(x), sy(0), sx(x), sy(top),
                       m == 1.0 ? "#ddd" : "#f2f2f2");
      if (m == 1.0 || (std::log10(hi / lo) <= 2))
        s += fmt::format(R"X(<text x="{:.2f}" y="{:.2f}" font-size="11" text-anchor="middle">{}</text>)X", sx(x), H - B + 16,
                         token_label(x));
    }
  }
  for (double y = 0; y <= top + 1e-9; y += ystep) {
    s += fmt::format(R"X(<line x1="{}" y1="{:.2f}" x2="{}" y2="{:.2f}" stroke="#eee"/>)X", L, sy(y), W - R, sy(y));
    s += fmt::format(R"X(<text x="{}" y="{:.2f}" font-size="11" text-anchor="end">{}</text>)X", L - 6, sy(y) + 4, format_number(y, 2));
  }
  s += fmt::format(R"X(<line x1="{}" y1="{:.2f}" x2="{}" y2="{:.2f}" stroke="#444"/>)X", L, sy(0), W - R, sy(0));
  s += fmt::format(R"X(<line x1="{}" y1="{:.2f}" x2="{}" y2="{:.2f}" stroke="#444"/>)X", L, sy(0), L, sy(top));
  s += fmt::format(R"X(<line x1="{}" y1="{:.2f}" x2="{}" y2="{:.2f}" stroke="#999" stroke-dasharray="2 3"/>)X", L, sy(1), W - R, sy(1));
  s += fmt::format(R"X(<text x="{:.1f}" y="{}" font-size="12" text-anchor="middle">cumulative tokens per trajectory (log)</text>)X",
                   (L + W - R) / 2, H - 10);
  s += fmt::format(R"X(<text transform="translate(14,{:.1f}) rotate(-90)" font-size="12" text-anchor="middle">median best speedup</text>)X",
                   (T + H - B) / 2);

  for (bool agent : {false, true}) {
    const CurveSide& side = agent ? curve.agent : curve.refinement;
    if (side.median.empty()) continue;
    const char* color = agent ? kAgentColor : kRefinementColor;
    const double at_zero = agent ? curve.agent_at_zero : curve.refinement_at_zero;
    const std::size_t n = curve.tokens.size();
    // The band: its upper edge left to right, its lower edge back, each a step function.
    std::string band = fmt::format("M{:.2f},{:.2f}", sx(curve.tokens[0]), sy(side.band[0].upper));
    for (std::size_t g = 0; g < n; ++g) {
      double next = g + 1 < n ? curve.tokens[g + 1] : hi;
      band += fmt::format("V{:.2f}H{:.2f}", sy(side.band[g].upper), sx(next));
    }
    for (std::size_t g = n; g-- > 0;) band += fmt::format("V{:.2f}H{:.2f}", sy(side.band[g].lower), sx(curve.tokens[g]));
    band += "Z";
    s += fmt::format(R"X(<path class="curve-band" data-side="{}" d="{}" fill="{}" fill-opacity="0.18" stroke="none"><title>{} {}: pointwise bootstrap band ({} trajectories)</title></path>)X",
                     side_name(agent), band, color, side_name(agent), e(curve.definition), side.trajectories);
    std::string line = fmt::format("M{:.2f},{:.2f}", sx(lo), sy(at_zero));
    for (std::size_t g = 0; g < n; ++g) line += fmt::format("H{:.2f}V{:.2f}", sx(curve.tokens[g]), sy(side.median[g]));
    line += fmt::format("H{:.2f}", sx(hi));
    s += fmt::format(R"X(<path class="curve-median" data-side="{}" d="{}" fill="none" stroke="{}" stroke-width="2"><title>{} {}: median best speedup, {} trajectories; {} at the last step</title></path>)X",
                     side_name(agent), line, color, side_name(agent), e(curve.definition), side.trajectories,
                     format_number(side.median.back(), 3));
  }
  double ly = T + 6;
  for (bool agent : {true, false}) {
    s += fmt::format(R"X(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="{}" stroke-width="2"/><text x="{}" y="{:.1f}" font-size="11">{}</text>)X",
                     L + 10, ly, L + 28, ly, agent ? kAgentColor : kRefinementColor, L + 32, ly + 4, side_name(agent));
    ly += 15;
  }
  return s + "</svg>";
}

std::string agent_comparison_section_html(const AgentComparison& c) {
  const std::string pct = fmt::format("{:g}%", 100.0 * c.bootstrap.confidence);
  std::string s;
  if (c.fake()) s += "<p class=\"bad fake-banner\" id=\"agent-fake-backend\">" + e(fake_mark(c)) + "</p>\n";
  s += "<h2 id=\"agent-runs-heading\">Runs</h2>" + runs_table(c);
  s += "<h2 id=\"agent-warnings\">Comparability</h2>";
  if (c.warnings.empty())
    s += "<p>No warning: same budget, definitions, model, GPU, prompt tags and evaluation options.</p>";
  else {
    s += "<ul id=\"agent-warning-list\">";
    for (const auto& w : c.warnings) s += "<li class=\"bad\">" + e(w) + "</li>";
    s += "</ul>";
  }
  s += fmt::format("<h2 id=\"agent-table\">Table 3: agent vs refinement at N = {} evaluation requests</h2>", c.requests);
  s += "<p class=\"note\">" + e(fmt::format("Median over counted trajectories of the per-trajectory best instruction-qualified speedup "
                                            "within the first N = {} requests (no qualified turn = 0), with its {} bootstrap interval; "
                                            "k/n: trajectories with a qualified timed turn; token ratio: median cumulative tokens "
                                            "through N, agent / refinement.",
                                            c.requests, pct)) +
       "</p>" + main_table(c);
  std::string notes;
  for (const auto& r : c.rows)
    if (auto n = comparison_notes(r); !n.empty()) notes += "<li>" + e(r.definition) + ": " + e(n) + "</li>";
  if (!notes.empty()) s += "<p><b>Notes</b></p><ul id=\"agent-notes\">" + notes + "</ul>";
  s += "<h3>The same medians under the strict rule and unrestricted</h3>" + rules_table(c);
  s += "<h3>Median cumulative tokens through N, by kind</h3>" + tokens_table(c);

  s += "<h2 id=\"agent-figure14\">Figure 14: median best speedup within a per-trajectory token budget</h2>";
  s += "<p class=\"note\">" +
       e(fmt::format("Lines: the median over counted trajectories of the best instruction-qualified speedup reached within x "
                     "cumulative tokens (log axis), exact step functions; shaded: the pointwise {} bootstrap band (B = {}, seed {}). "
                     "The dotted line is speedup 1 (the baseline).",
                     pct, c.bootstrap.resamples, c.bootstrap.seed)) +
       "</p>";
  s += fmt::format("<div class=\"legend\"><span><span class=\"swatch\" style=\"background:{}\"></span>agent {}</span><span><span "
                   "class=\"swatch\" style=\"background:{}\"></span>refinement {}</span></div>",
                   kAgentColor, e(c.agent.info.id), kRefinementColor, e(c.refinement.info.id));
  s += "<div class=\"charts\">";
  // The pooled chart first, then one per definition.
  std::vector<const TokenCurve*> order;
  for (const auto& curve : c.curves)
    if (curve.pooled) order.push_back(&curve);
  for (const auto& curve : c.curves)
    if (!curve.pooled) order.push_back(&curve);
  for (const auto* curve : order)
    s += "<div class=\"chart\">" +
         token_curve_svg(*curve, (curve->pooled ? std::string("all definitions") : curve->definition) +
                                     fmt::format(" ({} / {} trajectories)", curve->agent.trajectories, curve->refinement.trajectories)) +
         "</div>";
  s += "</div>";
  for (const auto* curve : order)
    s += "<details><summary>Every step point: " + e(curve->definition) + "</summary>" + points_table(*curve) + "</details>";

  s += "<h2 id=\"agent-definitions\">Definitions</h2><dl>";
  for (const auto& d : agent_comparison_definitions(c)) s += "<dt id=\"agent-def-" + e(d.key) + "\">" + e(d.name) + "</dt><dd>" + e(d.text) + "</dd>";
  return s + "</dl>\n";
}

std::string render_agent_comparison_html(const AgentComparison& c) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  s += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n";
  s += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>ptxbench: agent vs refinement</title>\n<style>";
  s += kStyle;
  s += "</style></head><body>\n<h1>ptxbench: agent vs refinement</h1>\n";
  s += "<p class=\"small\">" +
       e(fmt::format("Store {} \u00b7 generated {} \u00b7 N = {} evaluation requests per trajectory \u00b7 bootstrap B = {}, seed {}, "
                     "{:g}% \u00b7 opens offline: no script, no network access, everything is inline.",
                     c.store, c.generated_at, c.requests, c.bootstrap.resamples, c.bootstrap.seed, 100.0 * c.bootstrap.confidence)) +
       "</p>\n";
  s += agent_comparison_section_html(c);
  return s + "</body></html>\n";
}

}  // namespace ptxbench::report
