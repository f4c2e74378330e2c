#include "report/label_charts.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/report_html.h"

namespace ptxbench::report {
namespace {

std::string e(std::string_view s) { return html_escape(s); }

}  // namespace

const char* label_color(TurnLabel l) {
  switch (l) {
    case TurnLabel::correct: return "#2ca02c";
    case TurnLabel::numerical_error: return "#ff7f0e";
    case TurnLabel::compilation_error: return "#d62728";
    case TurnLabel::runtime_error: return "#9467bd";
    case TurnLabel::sanitize_timeout: return "#8c564b";
    case TurnLabel::kernel_timeout: return "#e377c2";
    case TurnLabel::service_timeout: return "#bcbd22";
    case TurnLabel::extraction_error: return "#7f7f7f";
    case TurnLabel::other: return "#17becf";
    case TurnLabel::infra_error: return "#c7c7c7";
  }
  return "#000";
}

// Turn labels per turn index as stacked bars.
std::string label_bars_svg(const LabelCounts& c) {
  const int W = 360, H = 200, L = 34, R = 8, T = 10, B = 28;
  std::size_t n = std::max<std::size_t>(c.per_turn.size(), 1);
  int64_t top = 1;
  for (const auto& row : c.per_turn) {
    int64_t sum = 0;
    for (auto x : row) sum += x;
    top = std::max(top, sum);
  }
  double bw = double(W - L - R) / double(n);
  std::string s = fmt::format(R"X(<svg class="label-bars" width="{}" height="{}" viewBox="0 0 {} {}" role="img">)X", W, H, W, H);
  s += fmt::format(R"X(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#444"/>)X", L, H - B, W - R, H - B);
  s += fmt::format(R"X(<text x="{}" y="{}" font-size="10" text-anchor="end">{}</text>)X", L - 4, T + 8, top);
  s += fmt::format(R"X(<text x="{}" y="{}" font-size="10" text-anchor="end">0</text>)X", L - 4, H - B);
  for (std::size_t i = 0; i < c.per_turn.size(); ++i) {
    double y = H - B;
    for (auto l : kAllLabels) {
      int64_t v = c.per_turn[i][static_cast<std::size_t>(label_index(l))];
      if (!v) continue;
      double h = double(H - B - T) * double(v) / double(top);
      y -= h;
      s += fmt::format(R"X(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>turn {}: {} {}</title></rect>)X",
                       L + bw * double(i) + 2, y, std::max(bw - 4, 1.0), h, label_color(l), i + 1, v, e(label_name(l)));
    }
    s += fmt::format(R"X(<text x="{:.1f}" y="{}" font-size="10" text-anchor="middle">{}</text>)X", L + bw * (double(i) + 0.5),
                     H - B + 13, i + 1);
  }
  s += fmt::format(R"X(<text x="{}" y="{}" font-size="11" text-anchor="middle">turn</text></svg>)X", (L + W - R) / 2, H - 4);
  return s;
}

// Transitions label(n) -> label(n+1) as a heatmap matrix.
std::string transition_svg(const Transitions& tr) {
  const int cell = 28, L = 96, T = 86, W = L + cell * kLabelCount + 64, H = T + cell * kLabelCount + 24;
  int64_t top = 1;
  for (const auto& row : tr.counts)
    for (auto x : row) top = std::max(top, x);
  std::string s = fmt::format(R"X(<svg class="transition-heatmap" width="{}" height="{}" viewBox="0 0 {} {}" role="img">)X", W, H, W, H);
  for (int i = 0; i < kLabelCount; ++i) {
    auto l = kAllLabels[static_cast<std::size_t>(i)];
    s += fmt::format(R"X(<text x="{}" y="{}" font-size="10" text-anchor="end">{}</text>)X", L - 4, T + cell * i + cell / 2 + 4, label_short(l));
    s += fmt::format(R"X(<text transform="translate({},{}) rotate(-50)" font-size="10">{}</text>)X", L + cell * i + cell / 2 + 3, T - 4,
                     label_short(l));
  }
  for (int a = 0; a < kLabelCount; ++a)
    for (int b = 0; b < kLabelCount; ++b) {
      int64_t v = tr.counts[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
      double f = double(v) / double(top);
      int shade = 255 - static_cast<int>(f * 200);
      s += fmt::format(R"X(<rect x="{}" y="{}" width="{}" height="{}" fill="rgb({},{},255)" stroke="#fff"><title>{} -> {}: {}</title></rect>)X",
                       L + cell * b, T + cell * a, cell, cell, shade, shade, e(label_name(kAllLabels[static_cast<std::size_t>(a)])),
                       e(label_name(kAllLabels[static_cast<std::size_t>(b)])), v);
      if (v)
        s += fmt::format(R"X(<text x="{}" y="{}" font-size="10" text-anchor="middle" fill="{}">{}</text>)X", L + cell * b + cell / 2,
                         T + cell * a + cell / 2 + 4, f > 0.6 ? "#fff" : "#000", v);
    }
  s += fmt::format(R"X(<text x="{}" y="{}" font-size="11">rows: turn n, columns: turn n+1</text></svg>)X", L, H - 6);
  return s;
}

}  // namespace ptxbench::report
