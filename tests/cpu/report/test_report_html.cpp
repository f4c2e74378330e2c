// The HTML report rendered by a real browser (headless Chromium, installed by scripts/setup.sh):
// the page's own script runs under its Content-Security-Policy and draws the Fast_p curves (one
// chart per model x GPU), the static SVG charts and tables are there, model text injected into the
// store stays text, and in a 1400 x 900 window the first screen holds a chart and the page does not
// overflow sideways (the script records its layout; tables scroll in their own boxes). A screenshot
// of that first screen is written to <build>/report_screenshot.png.
// Chromium missing is a FAILURE, not a skip: CI runs scripts/setup.sh first.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "runs/import_original.h"
#include "common/fs.h"
#include "common/subprocess.h"
#include "report/report_data.h"
#include "report/report_html.h"
#include "test_report_support.h"

using namespace ptxbench;
using namespace ptxbench::report;
using namespace ptxbench::test;

namespace {

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser"})
    if (auto p = find_on_path(name); !p.empty()) return p;
  return "";
}

ProcessResult chromium(const std::string& exe, const fs::path& profile, std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars",
               "--user-data-dir=" + profile.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.output_cap_bytes = 64 << 20;
  return run_process(spec, 180);
}

uint32_t big_endian32(const std::string& s, std::size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) | (uint32_t(uint8_t(s[at + 2])) << 8) |
         uint32_t(uint8_t(s[at + 3]));
}

// Writes the report of `runs` to <build>/report_test/<name>.html and returns its file:// URL.
std::string write_report(RunStore& store, const std::vector<std::string>& runs, const std::string& name) {
  fs::path out = fs::path(PTXBENCH_BUILD_DIR) / "report_test";
  fs::create_directories(out);
  fs::path html = fs::absolute(out / (name + ".html"));
  write_file_atomic(html, render_html(build_report(store, runs, {1, 4, 8})));
  return "file://" + html.string();
}

std::string require_chromium() {
  std::string exe = find_chromium();
  if (exe.empty())
    ADD_FAILURE() << "chromium is not installed: run scripts/setup.sh (it installs the Debian package 'chromium'), "
                     "or apt-get install chromium. This test renders the HTML report in a real browser.";
  return exe;
}

// An attribute the page's script wrote on the element `id` (-1 when absent).
int attribute(const std::string& dom, const std::string& id, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("id=\"" + id + "\"[^>]*" + name + "=\"(-?[0-9]+)\""))) return -1;
  return std::stoi(m[1].str());
}

int drawn_curves(const std::string& dom) { return attribute(dom, "fastp-ready", "data-curves"); }

// In a 1400 x 900 window: the page is no wider than the window, and the first Fast_p chart lies
// wholly inside the first screen (the viewport the page's script measured).
void expect_first_screen_fits(const std::string& dom) {
  int scroll = attribute(dom, "layout-check", "data-scroll-width"), client = attribute(dom, "layout-check", "data-client-width");
  int top = attribute(dom, "layout-check", "data-first-chart-top"), bottom = attribute(dom, "layout-check", "data-first-chart-bottom");
  int height = attribute(dom, "layout-check", "data-viewport-height");
  EXPECT_EQ(client, 1400) << "the window's width";
  EXPECT_GT(scroll, 0);
  EXPECT_LE(scroll, client) << "the page overflows sideways";
  // Headless Chromium keeps part of the 900 px for its window frame (757 px in version 1xx): the
  // chart must fit what is left, a stricter test than 900.
  EXPECT_GT(height, 600);
  EXPECT_LE(height, 900);
  EXPECT_GE(top, 0);
  EXPECT_GT(bottom, top);
  EXPECT_LE(bottom, height) << "the first chart is not wholly in the first screen";
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST(ReportHtml, InjectedModelTextStaysTextInTheBrowser) {
  std::string exe = require_chromium();
  if (exe.empty()) return;
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  SampleRuns runs = build_sample_runs(store);
  std::string url = write_report(store, {runs.agent, runs.refinement}, "report_injection");
  ProcessResult dom = chromium(exe, dir.path() / "profile", {"--dump-dom", url});
  ASSERT_TRUE(dom.status.success()) << dom.status.describe() << "\n" << dom.err.text;
  const std::string& d = dom.out.text;
  // The page's own script ran (its CSP hash matched), though names in its data block are hostile.
  // It shows the last measured budget, T = 4: one chart per model x GPU (model-a, model-b), the
  // agent's gemm, attn and (all) with Fast^Inst_p and Fast_p each; the refinement ran 2 turns (no
  // curve at T = 4); no verdict holds a strict one, so no strict curve.
  EXPECT_EQ(drawn_curves(d), 6) << "the script did not run, or drew other curves";
  EXPECT_EQ(attribute(d, "fastp-ready", "data-charts"), 2);
  EXPECT_EQ(count(d, "class=\"fastp-curve\""), 6u);
  EXPECT_EQ(count(d, "data-rule=\"best_strict\""), 0u);
  EXPECT_GT(count(d, "class=\"fastp-interval\""), 0u) << "the bootstrap intervals of Fast^Inst_p";
  EXPECT_NE(d.find("18.2 ["), std::string::npos) << "Table 1's gemm cell at T = 4 with its interval";
  // Injected model text stayed text: no retitled page, no marked body, no element from it.
  EXPECT_NE(d.find("<title>ptxbench report</title>"), std::string::npos);
  EXPECT_EQ(d.find("PWNED</title>"), std::string::npos);
  EXPECT_EQ(d.find("data-pwned=\"1\""), std::string::npos);
  EXPECT_EQ(d.find("<img"), std::string::npos);
  EXPECT_EQ(d.find("<textarea"), std::string::npos);
  EXPECT_NE(d.find("&lt;script&gt;document.title='PWNED'&lt;/script&gt;"), std::string::npos) << "shown as text";
}

TEST(ReportHtml, RendersTablesChartsAndAScreenshot) {
  std::string exe = require_chromium();
  if (exe.empty()) return;
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  std::vector<std::string> runs = build_realistic_runs(store);
  std::string url = write_report(store, runs, "report");

  ProcessResult dom = chromium(exe, dir.path() / "profile-dom", {"--window-size=1400,900", "--dump-dom", url});
  ASSERT_TRUE(dom.status.success()) << dom.status.describe() << "\n" << dom.err.text;
  const std::string& d = dom.out.text;
  // One chart per model (2, both on the H200) at T = 8, each with its 3 groups (2 definitions and
  // (all)) x (Fast^Inst_p, Fast_p); no strict verdicts, so no strict curves.
  EXPECT_EQ(drawn_curves(d), 12);
  EXPECT_EQ(count(d, "class=\"fastp-curve\""), 12u);
  EXPECT_EQ(count(d, "class=\"fastp-chart\""), 2u) << "one chart per model";
  EXPECT_EQ(count(d, "class=\"chart-title\""), 2u);
  EXPECT_NE(d.find(">frontier-model \u00b7 NVIDIA H200 \u00b7 T = 8<"), std::string::npos) << "the full title, as HTML text";
  EXPECT_TRUE(std::regex_search(d, std::regex("<path d=\"M[0-9.]+,[0-9.]+H[0-9.]+V[0-9.]+"))) << "a step curve with a drop";
  // Within a chart every group has its own colour.
  std::set<std::string> colours;
  const std::regex swatch("class=\"swatch curve-swatch\" style=\"background:([^\"]+)\"");
  for (std::sregex_iterator it(d.begin(), d.end(), swatch), end; it != end; ++it)
    colours.insert((*it)[1].str());
  EXPECT_EQ(colours.size(), 3u) << "3 groups per chart, 3 colours, the same 3 in each chart";
  EXPECT_NE(d.find("id=\"fastp-select\""), std::string::npos);
  EXPECT_NE(d.find("id=\"fastp-model\""), std::string::npos);
  EXPECT_NE(d.find("id=\"fastp-budget\""), std::string::npos);
  expect_first_screen_fits(d);
  EXPECT_EQ(count(d, "class=\"transition-heatmap\""), 6u);
  EXPECT_EQ(count(d, "class=\"label-bars\""), 6u);
  EXPECT_NE(d.find("id=\"table-turn_correctness\""), std::string::npos);
  EXPECT_NE(d.find("id=\"table-best_speedup\""), std::string::npos);
  EXPECT_NE(d.find("data-metric=\"fast_1\""), std::string::npos);
  EXPECT_EQ(count(d, "<details class=\"traj\""), 48u) << "every trajectory in the drill-down";
  EXPECT_NE(d.find("<button type=\"button\">Expand all</button>"), std::string::npos);
  EXPECT_NE(d.find("Token ratio between runs"), std::string::npos);
  EXPECT_NE(d.find("Missing turns"), std::string::npos);

  // The first screen, as a user with a 1400 px window sees it.
  fs::path shot = fs::path(PTXBENCH_BUILD_DIR) / "report_screenshot.png";
  fs::remove(shot);
  ProcessResult s = chromium(exe, dir.path() / "profile-shot", {"--screenshot=" + shot.string(), "--window-size=1400,900", url});
  ASSERT_TRUE(s.status.success()) << s.status.describe() << "\n" << s.err.text;
  ASSERT_TRUE(fs::exists(shot)) << shot;
  std::string png = read_file(shot);
  ASSERT_GE(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(big_endian32(png, 16), 1400u);
  EXPECT_EQ(big_endian32(png, 20), 900u);
  // A blank 1400x900 page compresses to a few KB; text and two charts take many times that.
  EXPECT_GT(png.size(), 40u * 1024) << "the screenshot looks empty: " << shot;
}

// The report of the original PTXBench's imported runs (tests/fixtures/original/release_extract.csv:
// experiments with long names, several per definition) in the same window: still no sideways
// overflow, a chart in the first screen, one chart per model x GPU.
TEST(ReportHtml, ImportedReleaseFitsTheWindow) {
  std::string exe = require_chromium();
  if (exe.empty()) return;
  TempDir dir;
  RunStore store((dir.path() / "runs.db").string());
  auto summary = import_original_csv(store, (fs::path(PTXBENCH_TEST_DATA) / "fixtures" / "original" / "release_extract.csv").string());
  std::vector<std::string> runs;
  for (const auto& r : summary.runs) runs.push_back(r.run_id);
  std::string url = write_report(store, runs, "report_imported");
  ProcessResult dom = chromium(exe, dir.path() / "profile-dom", {"--window-size=1400,900", "--dump-dom", url});
  ASSERT_TRUE(dom.status.success()) << dom.status.describe() << "\n" << dom.err.text;
  EXPECT_EQ(attribute(dom.out.text, "fastp-ready", "data-charts"), 2) << "Gemini 3.1 Pro and the notes-and-kernel model, both H100";
  expect_first_screen_fits(dom.out.text);
  fs::path shot = fs::path(PTXBENCH_BUILD_DIR) / "report_imported_screenshot.png";
  ProcessResult s = chromium(exe, dir.path() / "profile-shot", {"--screenshot=" + shot.string(), "--window-size=1400,900", url});
  ASSERT_TRUE(s.status.success()) << s.status.describe() << "\n" << s.err.text;
  EXPECT_TRUE(fs::exists(shot));
}
