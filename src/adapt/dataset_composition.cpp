// composition.html of a dataset folder (dataset_composition.h): pies and bars of the manifest's
// shares as inline SVG, with tables of counts.
#include "adapt/dataset_composition.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <numbers>
#include <string_view>
#include <utility>
#include <vector>

#include "report/report_html.h"

namespace ptxbench {
namespace {

using report::html_escape;

std::string compact(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

/// The report's colours for the turn labels (report_html.cpp), so the two pages agree.
std::string label_color(const std::string& key) {
  static const std::map<std::string, std::string> kColors = {
      {"correct", "#2ca02c"},          {"numerical_error", "#ff7f0e"}, {"compilation_error", "#d62728"},
      {"runtime_error", "#9467bd"},    {"sanitize_timeout", "#8c564b"}, {"kernel_timeout", "#e377c2"},
      {"service_timeout", "#bcbd22"},  {"extraction_error", "#7f7f7f"}, {"other", "#17becf"},
      {"infra_error", "#c7c7c7"}};
  auto it = kColors.find(key);
  return it == kColors.end() ? "#17becf" : it->second;
}

struct Slice {
  std::string label;
  int64_t count = 0;
  std::string color;
};

std::vector<Slice> slices_of(const ordered_json& rows, bool labels) {
  std::vector<Slice> out;
  std::size_t i = 0;
  for (const auto& row : rows) {
    std::string key = row.value("key", "");
    std::string name = labels ? row.value("name", key) : key;
    out.push_back({name, row.value("records", int64_t{0}), labels ? label_color(key) : kPalette[i % std::size(kPalette)]});
    ++i;
  }
  return out;
}

std::string pie_svg(const std::vector<Slice>& slices, const std::string& title) {
  constexpr double cx = 110, cy = 110, r = 100;
  int64_t total = 0;
  for (const auto& s : slices) total += s.count;
  std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="220" height="220" viewBox="0 0 220 220" role="img" aria-label="{}">)",
                                html_escape(title));
  if (total == 0) return svg + R"(<circle cx="110" cy="110" r="100" fill="#eee"/></svg>)";
  double angle = -std::numbers::pi / 2;
  for (const auto& s : slices) {
    if (s.count == 0) continue;
    double share = static_cast<double>(s.count) / static_cast<double>(total);
    std::string tip = fmt::format("<title>{}: {} ({:.1f}%)</title>", html_escape(s.label), s.count, 100 * share);
    if (s.count == total) {
      svg += fmt::format(R"(<circle cx="{:.3f}" cy="{:.3f}" r="{:.3f}" fill="{}" stroke="#fff">{}</circle>)", cx, cy, r, s.color, tip);
      break;
    }
    double end = angle + share * 2 * std::numbers::pi;
    svg += fmt::format(R"(<path d="M{:.3f},{:.3f} L{:.3f},{:.3f} A{:.3f},{:.3f} 0 {} 1 {:.3f},{:.3f} Z" fill="{}" stroke="#fff">{}</path>)",
                       cx, cy, cx + r * std::cos(angle), cy + r * std::sin(angle), r, r, share > 0.5 ? 1 : 0,
                       cx + r * std::cos(end), cy + r * std::sin(end), s.color, tip);
    angle = end;
  }
  return svg + "</svg>";
}

std::string bars_svg(const std::vector<Slice>& slices, const std::string& title) {
  constexpr int gap = 10, height = 160, left = 36, bottom = 24;
  constexpr std::size_t kMaxLabel = 12;  // characters under a bar; longer names are cut (the table has them whole)
  int64_t max = 1;
  std::size_t longest = 1;
  for (const auto& s : slices) {
    max = std::max(max, s.count);
    longest = std::max(longest, std::min(kMaxLabel, s.label.size()));
  }
  const int bar = std::clamp(static_cast<int>(7 * longest) + 4, 34, 92);
  int width = left + static_cast<int>(slices.size()) * (bar + gap) + gap;
  std::string svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img" aria-label="{2}">)",
                                width, height + bottom + 8, html_escape(title));
  svg += fmt::format(R"(<line x1="{0}" y1="8" x2="{0}" y2="{1}" stroke="#888"/><line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#888"/>)",
                     left, height + 8, width);
  svg += fmt::format(R"(<text x="{}" y="16" font-size="11" text-anchor="end">{}</text>)", left - 4, max);
  for (std::size_t i = 0; i < slices.size(); ++i) {
    const auto& s = slices[i];
    double h = static_cast<double>(height) * static_cast<double>(s.count) / static_cast<double>(max);
    int x = left + gap + static_cast<int>(i) * (bar + gap);
    svg += fmt::format(R"(<rect x="{}" y="{:.3f}" width="{}" height="{:.3f}" fill="{}"><title>{}: {}</title></rect>)", x,
                       8 + height - h, bar, h, s.color, html_escape(s.label), s.count);
    svg += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>)", x + bar / 2, height + 22,
                       html_escape(s.label.size() > kMaxLabel ? s.label.substr(0, kMaxLabel - 1) + "…" : s.label));
  }
  return svg + "</svg>";
}

std::string share_table(const ordered_json& rows, const std::vector<Slice>& slices) {
  int64_t total = 0;
  for (const auto& s : slices) total += s.count;
  std::string t = R"(<table><tr><th></th><th>key</th><th class="num">records</th><th class="num">share</th><th class="num">train</th><th class="num">eval</th></tr>)";
  std::size_t i = 0;
  for (const auto& row : rows) {
    t += fmt::format(R"(<tr><td><span class="sw" style="background:{}"></span></td><td>{}</td><td class="num">{}</td><td class="num">{:.1f}%</td><td class="num">{}</td><td class="num">{}</td></tr>)",
                     slices[i].color, html_escape(slices[i].label), slices[i].count,
                     total > 0 ? 100.0 * static_cast<double>(slices[i].count) / static_cast<double>(total) : 0.0,
                     row.value("train", int64_t{0}), row.value("eval", int64_t{0}));
    ++i;
  }
  return t + "</table>";
}

}  // namespace

std::string render_composition_html(const ordered_json& m) {
  std::string name = m.value("name", "");
  std::string h = R"(<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">)"
                  R"(<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">)";
  h += "<title>Dataset composition: " + html_escape(name) + "</title><style>"
       "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;margin:0 auto;max-width:1200px;padding:16px 24px;color:#1b1b1b}"
       "table{border-collapse:collapse;margin:6px 0 10px}th,td{border:1px solid #d8d8d8;padding:3px 8px;text-align:left}"
       "th{background:#f3f5f7}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}"
       ".charts{display:flex;flex-wrap:wrap;gap:18px}.chart{border:1px solid #e2e2e2;border-radius:4px;padding:8px}"
       ".sw{display:inline-block;width:12px;height:12px;border-radius:2px}code{font-size:12px}"
       "</style></head><body>";
  const auto& rec = m.value("records", ordered_json::object());
  const auto& recipe = m.value("recipe", ordered_json::object());
  h += "<h1>Dataset composition: " + html_escape(name) + "</h1>";
  h += "<table>";
  auto row = [&](const std::string& k, const std::string& v) { h += "<tr><th>" + k + "</th><td>" + v + "</td></tr>"; };
  row("kind", html_escape(m.value("kind", "")));
  row("records", fmt::format("{} (train {}, eval {})", rec.value("total", int64_t{0}), rec.value("train", int64_t{0}),
                             rec.value("eval", int64_t{0})));
  row("recipe sha256", "<code>" + html_escape(m.value("recipe_sha256", "")) + "</code>");
  row("problem set", html_escape(recipe.contains("problem_set") ? compact(recipe["problem_set"]) : ""));
  row("held out", html_escape(recipe.contains("held_out") ? compact(recipe["held_out"]) : "[]"));
  row("balance", html_escape(recipe.contains("balance") ? compact(recipe["balance"]) : ""));
  row("shuffle seed", html_escape(recipe.contains("shuffle_seed") ? compact(recipe["shuffle_seed"]) : ""));
  const auto& reasoning = m.value("reasoning", ordered_json());
  row("teacher", reasoning.is_object() ? html_escape(reasoning.value("teacher_model", "")) : "none (no reasoning)");
  row("loss mask", html_escape(m.value("loss_mask", "")));
  row("ptxbench", html_escape(m.value("ptxbench_version", "")));
  h += "</table>";

  const auto& sh = m.value("shares", ordered_json::object());
  const std::pair<const char*, const char*> sections[] = {
      {"definition", "Share per problem"}, {"label", "Share per label"}, {"turn", "Share per turn"}, {"prompt_tag", "Share per prompt tag"}};
  h += R"(<div class="charts">)";
  for (const auto& [dim, title] : sections) {
    ordered_json rows = sh.value(dim, ordered_json::array());
    auto slices = slices_of(rows, std::string_view(dim) == "label");
    bool pie = std::string_view(dim) == "definition" || std::string_view(dim) == "label";
    h += R"(<div class="chart"><h2>)" + std::string(title) + "</h2>";
    h += pie ? pie_svg(slices, title) : bars_svg(slices, title);
    h += share_table(rows, slices) + "</div>";
  }
  h += "</div>";

  const auto& sel = m.value("selection", ordered_json::object());
  h += "<h2>Selection</h2><table><tr><th>definition</th><th>label</th><th class=\"num\">available</th><th class=\"num\">kept</th></tr>";
  for (const auto& s : sel.value("strata", ordered_json::array()))
    h += fmt::format(R"(<tr><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td></tr>)",
                     html_escape(s.value("definition", "")), html_escape(s.value("label", "")), s.value("available", int64_t{0}),
                     s.value("kept", int64_t{0}));
  h += "</table><h2>Source runs</h2><table><tr><th>run</th><th>model</th><th class=\"num\">trajectories read</th></tr>";
  for (const auto& r : sel.value("runs", ordered_json::array()))
    h += fmt::format(R"(<tr><td>{}</td><td>{}</td><td class="num">{}</td></tr>)", html_escape(r.value("run", "")),
                     html_escape(r.value("model", "")), r.value("trajectories_read", int64_t{0}));
  h += "</table></body></html>\n";
  return h;
}

}  // namespace ptxbench
